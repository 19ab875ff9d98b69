/**
 * BSON cannot hold the character U+0000 in a field name (the driver refuses the whole document),
 * and FerretDB, which keeps documents in PostgreSQL's jsonb, refuses it in a string too, while a
 * JSON payload may hold it anywhere. What is stored from a delivery therefore has each U+0000, in
 * a key or a string, replaced by U+FFFD (the replacement character), as the PostgreSQL adapter
 * stores it: such an event is stored and seen instead of failing its job on every retry.
 *
 * Nearly no payload holds one, so nothing is copied unless something changes: the same object
 * comes back, and the walk costs a look at each key and string.
 */
export function withoutNul<T>(value: T): T {
  return clean(value) as T;
}

const NUL = '\u0000';
const replaced = (text: string) => (text.includes(NUL) ? text.replaceAll(NUL, '\uFFFD') : text);

/** A JSON object as parsed or built here; a Date (or any other class) is left as it is. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function clean(value: unknown): unknown {
  if (typeof value === 'string') return replaced(value);
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item: unknown, index) => {
      const cleaned = clean(item);
      if (cleaned !== item) (copy ??= [...value])[index] = cleaned;
    });
    return copy ?? value;
  }
  if (!isPlainObject(value)) return value;
  const object = value;
  // Entries (not assignments into a new object), so a key such as `__proto__` stays a key.
  let entries: [string, unknown][] | undefined;
  Object.keys(object).forEach((key, position) => {
    const item = object[key];
    const cleanKey = replaced(key);
    const cleaned = clean(item);
    if (!entries && (cleanKey !== key || cleaned !== item))
      entries = Object.keys(object)
        .slice(0, position)
        .map((earlier) => [earlier, object[earlier]]);
    entries?.push([cleanKey, cleaned]);
  });
  return entries ? Object.fromEntries(entries) : value;
}
