/**
 * A payload's keys as a field name of a MongoDB-compatible server may be. JSON allows any key, and
 * the event schemas allow extra fields, but FerretDB refuses a document with a field name that
 * starts with `$` or holds a `.`, at any depth (MongoDB only in some places): the insert of such an
 * event would fail on every attempt. So in the payload of such an event every `%`, `$` and `.` of
 * every key is written as `%25`, `%24` and `%2E`. Every `%` is escaped too, so a key that already
 * looks escaped comes back as it was: the escape round-trips exactly. Only a payload that needs it
 * is escaped, and its document says so (`keysEscaped`), so every other document, and those stored
 * by releases before this escape, are read as they are. Pure.
 */

/** Whether a server refuses `key` as a field name. */
const refused = (key: string) => key.startsWith('$') || key.includes('.');

const ESCAPES: Record<string, string> = { '%': '%25', $: '%24', '.': '%2E' };
const UNESCAPES: Record<string, string> = { '%25': '%', '%24': '$', '%2E': '.' };

const escapeKey = (key: string) => key.replace(/[%$.]/g, (char) => ESCAPES[char] ?? char);
// Left to right, each escape once: `%2524` is an escaped `%` then `24`.
const unescapeKey = (key: string) => key.replace(/%(?:25|24|2E)/g, (escape) => UNESCAPES[escape] ?? escape);

/** A JSON object as parsed; a Date (or any other class) is not one. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** Whether any key in `value`, at any depth, is one a server refuses. */
export function hasRefusedKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasRefusedKey);
  if (!isPlainObject(value)) return false;
  return Object.entries(value).some(([key, item]) => refused(key) || hasRefusedKey(item));
}

function mapKeys(value: unknown, map: (key: string) => string): unknown {
  if (Array.isArray(value)) return value.map((item) => mapKeys(item, map));
  if (!isPlainObject(value)) return value;
  // Entries, not assignments into a new object, so a key such as `__proto__` stays a key.
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [map(key), mapKeys(item, map)]));
}

/** `data` with every key escaped. */
export function escapeKeys(data: Record<string, unknown>): Record<string, unknown> {
  return mapKeys(data, escapeKey) as Record<string, unknown>;
}

/** `data` as it was before escapeKeys. */
export function unescapeKeys(data: Record<string, unknown>): Record<string, unknown> {
  return mapKeys(data, unescapeKey) as Record<string, unknown>;
}

/** A stored event's payload as received: unescaped when its document says its keys are escaped. */
export function payloadOf(doc: {
  data: Record<string, unknown>;
  keysEscaped?: boolean;
}): Record<string, unknown> {
  return doc.keysEscaped ? unescapeKeys(doc.data) : doc.data;
}
