/**
 * Every value sent for header `name` (lowercase), one per header line, from Node's rawHeaders
 * (name, value, name, value, ...). The same as `req.headersDistinct[name]`, which builds the
 * lists of all headers on first use; the webhook handler only needs one (BENCHMARKS.md, "Receiver").
 */
export function headerLines(rawHeaders: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const line = rawHeaders[i] as string;
    if (line.length === name.length && line.toLowerCase() === name) values.push(rawHeaders[i + 1] as string);
  }
  return values;
}
