/** A JSON string, a structural character, or anything else up to the next of them. */
const TOKEN = /"(?:[^"\\]|\\.)*"|[{}[\]:,]/g;

/**
 * The keys of the top-level object of valid JSON `text` that it gives more than once, each once,
 * in order: JSON.parse keeps the last silently, so a translator's fix to the first copy of a
 * message would never show. Pure; `text` must already parse.
 */
export function repeatedJsonKeys(text: string): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  let depth = 0;
  let pending: string | undefined;
  for (const [token] of text.matchAll(TOKEN)) {
    if (token === '{' || token === '[') depth += 1;
    else if (token === '}' || token === ']') depth -= 1;
    else if (token === ':' && depth === 1 && pending !== undefined) {
      const key = JSON.parse(pending) as string;
      if (seen.has(key)) repeated.add(key);
      seen.add(key);
    }
    pending = token.startsWith('"') ? token : undefined;
  }
  return [...repeated];
}
