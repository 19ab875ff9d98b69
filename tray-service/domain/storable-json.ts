import { isStorable } from './stored-text.ts';

/**
 * A JSON value with every string in it, keys included, as storage can keep it: each U+0000 and
 * each lone surrogate becomes U+FFFD, the replacement character; and every number JSON cannot
 * hold (a sender's 1e400, which JSON.parse reads as Infinity) becomes null, as JSON.stringify
 * writes it, so PostgreSQL's jsonb kept null already, while FerretDB refused the document.
 * - U+0000: PostgreSQL's text and jsonb cannot hold it, nor FerretDB's documents on it, and BSON
 *   refuses it in a field name.
 * - A lone surrogate: JSON may carry one as an escape ("\ud83d": half an emoji, cut by a sender
 *   that truncates text by UTF-16 units); PostgreSQL's jsonb refuses it, and UTF-8 (MongoDB's)
 *   cannot encode it, so the driver would replace it unasked.
 * Either would fail an event's job on every attempt on one engine, or change it on another. The
 * worker applies it to every delivery before mapping or storing it, and each adapter to what it
 * is handed, so the port keeps the rule for any caller. Nothing is copied unless something
 * changes (the same object comes back); objects that are not plain JSON ones (a Date) are left as
 * they are. Pure.
 */
export function storableJson<T>(value: T): T {
  return fix(value) as T;
}

const storable = (text: string) =>
  text.isWellFormed() && isStorable(text) ? text : text.toWellFormed().replaceAll('\u0000', '\uFFFD');

/** A JSON object as parsed or built; a Date (or any other class) is not one. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function fix(value: unknown): unknown {
  if (typeof value === 'string') return storable(value);
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (const [index, item] of value.entries()) {
      const fixed = fix(item);
      if (fixed !== item) (copy ??= [...value])[index] = fixed;
    }
    return copy ?? value;
  }
  if (!isPlainObject(value)) return value;
  let changed = false;
  // Entries, not assignments into a new object, so a key such as `__proto__` stays a key.
  const entries = Object.entries(value).map(([key, item]): [string, unknown] => {
    const fixedKey = storable(key);
    const fixed = fix(item);
    if (fixedKey !== key || fixed !== item) changed = true;
    return [fixedKey, fixed];
  });
  return changed ? Object.fromEntries(entries) : value;
}
