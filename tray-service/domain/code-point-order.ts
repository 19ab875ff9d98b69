/**
 * Orders strings by Unicode code point, which is the order of their UTF-8 bytes: the order
 * PostgreSQL compares ids in under `COLLATE "C"` and MongoDB compares strings in. JavaScript's `<`
 * compares UTF-16 code units instead, which puts a character above U+FFFF (stored as a surrogate
 * pair, 0xD800-0xDFFF) before one in U+E000-U+FFFF; ids mixing the two then had one order in the
 * domain and another in SQL. Pure; negative, zero or positive as `a` sorts before, with or after `b`.
 */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const shorter = Math.min(a.length, b.length);
  for (let i = 0; i < shorter; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/**
 * A code unit's rank where code point order and code-unit order part: surrogates (the units of
 * code points above U+FFFF) move above U+E000-U+FFFF. Only the first unit that differs is ranked,
 * and two strings that agree up to a surrogate pair's first unit compare their second units, whose
 * order is the code points' order.
 */
function codePointRank(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit < 0xe000 ? unit + 0x2000 : unit - 0x800;
}
