/**
 * A JSON value with every string in it, keys included, made well-formed: each lone surrogate
 * becomes U+FFFD. JSON may carry one as an escape ("\ud83d": half an emoji, cut by a sender that
 * truncates text by UTF-16 units), and neither storage can keep it: PostgreSQL's jsonb refuses
 * the event, which would fail its job on every attempt, and UTF-8 (MongoDB's) cannot encode it,
 * so the driver would replace it unasked. Made well-formed once, here, the event reads the same on
 * every adapter. Values without a lone surrogate are returned as they are (nothing is copied). Pure.
 */
export function wellFormedJson<T>(value: T): T {
  return fix(value) as T;
}

function fix(value: unknown): unknown {
  if (typeof value === 'string') return value.isWellFormed() ? value : value.toWellFormed();
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (const [index, item] of value.entries()) {
      const fixed = fix(item);
      if (fixed !== item) (copy ??= [...value])[index] = fixed;
    }
    return copy ?? value;
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value);
    let changed = false;
    const fixedEntries = entries.map(([key, item]): [string, unknown] => {
      const fixedKey = fix(key) as string;
      const fixed = fix(item);
      if (fixedKey !== key || fixed !== item) changed = true;
      return [fixedKey, fixed];
    });
    return changed ? Object.fromEntries(fixedEntries) : value;
  }
  return value;
}
