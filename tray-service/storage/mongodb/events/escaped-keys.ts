/**
 * A payload as a document of a MongoDB-compatible server may hold it. JSON allows any key, and the
 * event schemas allow extra fields, but FerretDB refuses a document with a field name that starts
 * with `$` or holds a `.`, at any depth (MongoDB only in some places), and one with an array
 * directly inside an array: the insert of such an event would fail on every attempt. So in the
 * payload of such an event every `%`, `$` and `.` of every key is written as `%25`, `%24` and
 * `%2E`, and each array inside an array is held in an object of one key, `%[]`. Every `%` of a
 * key is escaped, so a key that already looks escaped, `%[]` among them, comes back as it was: the
 * escape round-trips exactly. Only a payload that needs it is escaped, and its document says so
 * (`keysEscaped`, named when keys were all it escaped), so every other document, and those stored
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

/** The key of the object an array inside an array is held in; a payload's own `%[]` is escaped. */
const HELD_ARRAY = '%[]';

/** Whether `value` holds, at any depth, a key a server refuses or an array inside an array. */
export function hasRefusedKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some((item) => Array.isArray(item) || hasRefusedKey(item));
  if (!isPlainObject(value)) return false;
  return Object.entries(value).some(([key, item]) => refused(key) || hasRefusedKey(item));
}

function escapeValue(value: unknown): unknown {
  if (Array.isArray(value))
    return value.map((item) =>
      Array.isArray(item) ? { [HELD_ARRAY]: escapeValue(item) } : escapeValue(item),
    );
  if (!isPlainObject(value)) return value;
  // Entries, not assignments into a new object, so a key such as `__proto__` stays a key.
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [escapeKey(key), escapeValue(item)]));
}

function unescapeValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unescapeValue);
  if (!isPlainObject(value)) return value;
  const entries = Object.entries(value);
  const [only] = entries;
  // Only the escape writes this key: a payload's own `%[]` was stored as `%25[]`.
  if (entries.length === 1 && only?.[0] === HELD_ARRAY && Array.isArray(only[1]))
    return unescapeValue(only[1]);
  return Object.fromEntries(entries.map(([key, item]) => [unescapeKey(key), unescapeValue(item)]));
}

/** `data` with every key escaped, and every array inside an array held in an object. */
export function escapeKeys(data: Record<string, unknown>): Record<string, unknown> {
  return escapeValue(data) as Record<string, unknown>;
}

/** `data` as it was before escapeKeys. */
export function unescapeKeys(data: Record<string, unknown>): Record<string, unknown> {
  return unescapeValue(data) as Record<string, unknown>;
}

/** A stored event's payload as received: unescaped when its document says its keys are escaped. */
export function payloadOf(doc: {
  data: Record<string, unknown>;
  keysEscaped?: boolean;
}): Record<string, unknown> {
  return doc.keysEscaped ? unescapeKeys(doc.data) : doc.data;
}
