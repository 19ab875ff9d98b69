/**
 * The deepest nesting of objects and arrays in a JSON text, found by a linear scan that skips
 * strings. Run before JSON.parse so a hostile body of a million `[` costs one pass and no stack.
 * Stops counting once `limit` is exceeded.
 */
export function jsonDepth(text: string, limit: number): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i += 1; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth += 1;
      if (depth > max) max = depth;
      if (max > limit) return max;
    } else if (c === 0x7d || c === 0x5d) depth -= 1;
  }
  return max;
}
