/**
 * The values of one cookie in a Cookie header, as the browser sent them (a longer path's first),
 * at most `max`: any page of the same host (cookies keep no port apart) or a sibling subdomain can
 * set a cookie of the same name on a longer path, and reading only the first let it hide the real
 * one. Bounded, as each value may cost a lookup, but past what can be planted ahead of it: one on
 * each longer path of the deepest admin call, with and without its trailing slash, from both kinds
 * of page (four hid the session from the console's exports and statistics, six paths deep).
 * No cookie-parser dependency for one name.
 */
export function readCookies(header: string | undefined, name: string, max = 32): string[] {
  const values: string[] = [];
  for (const part of (header ?? '').split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) values.push(part.slice(index + 1).trim());
    if (values.length === max) break;
  }
  return values;
}
