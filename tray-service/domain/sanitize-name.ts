// Line and paragraph breaks become a space, so "Ana\nBen" does not glue into "AnaBen".
const breaks = /[\t\n\v\f\r\u0085\u2028\u2029]+/g;
// C0 and C1 controls, DEL, the bidi embeddings, overrides and isolates (U+202A-E, U+2066-9) and
// the invisible direction marks (LRM, RLM U+200E-F, ALM U+061C): an unterminated override in a
// name would reorder the rest of the message around it, and a mark first in it (every message
// starts with a name) would turn a whole message right to left where direction is taken from the
// text. A name of only these and white space counts as missing in the event mapping
// (display-name.ts).
// eslint-disable-next-line no-control-regex
const controls = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * A display name made safe for plain text: inserted as typed (no HTML escaping),
 * minus control characters. Normal spaces and every printable character stay.
 */
export function sanitizeName(name: string): string {
  return name.replace(breaks, ' ').replace(controls, '').trim();
}
