/**
 * A delivered JSON value with every string in it, keys included, as storage can keep it: each
 * U+0000 and each lone surrogate becomes U+FFFD, the replacement character.
 * - U+0000: PostgreSQL's text and jsonb cannot hold it, nor FerretDB's documents on it.
 * - A lone surrogate: JSON may carry one as an escape ("\ud83d": half an emoji, cut by a sender
 *   that truncates text by UTF-16 units); PostgreSQL's jsonb refuses it, and UTF-8 (MongoDB's)
 *   cannot encode it, so the driver would replace it unasked.
 * Either would fail the event's job on every attempt on one engine, or change it on another. Done
 * once, before the event is mapped or stored, it reads the same on every adapter. A value without
 * either is returned as it is (nothing is copied). Pure.
 */
export function storableJson<T>(value: T): T {
  return fix(value) as T;
}

const storable = (text: string) =>
  text.isWellFormed() && !text.includes('\u0000') ? text : text.toWellFormed().replaceAll('\u0000', '\uFFFD');

function fix(value: unknown): unknown {
  if (typeof value === 'string') return storable(value);
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (const [index, item] of value.entries()) {
      const fixed = fix(item);
      if (fixed !== item) (copy ??= [...value])[index] = fixed;
    }
    return copy ?? value;
  }
  if (typeof value === 'object' && value !== null) {
    let changed = false;
    const entries = Object.entries(value).map(([key, item]): [string, unknown] => {
      const fixedKey = storable(key);
      const fixed = fix(item);
      if (fixedKey !== key || fixed !== item) changed = true;
      return [fixedKey, fixed];
    });
    return changed ? Object.fromEntries(entries) : value;
  }
  return value;
}
