// Line and paragraph breaks become a space, so "Ana\nBen" does not glue into "AnaBen".
const breaks = /[\t\n\v\f\r\u0085\u2028\u2029]+/g;
// C0 and C1 controls, DEL, and the bidi embeddings, overrides and isolates (U+202A-E, U+2066-9):
// an unterminated override in a name would reorder the rest of the message around it. A name of
// only these and white space counts as missing in the event mapping (display-name.ts).
// eslint-disable-next-line no-control-regex
const controls = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * A display name made safe for plain text: inserted as typed (no HTML escaping),
 * minus control characters. Normal spaces and every printable character stay.
 */
export function sanitizeName(name: string): string {
  return name.replace(breaks, ' ').replace(controls, '').trim();
}
