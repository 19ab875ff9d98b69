import { parse } from 'node:querystring';

/**
 * The query parser of the tray and admin apps: Express's `simple` one (Node's querystring: a
 * repeated key becomes an array, never a nested object), without its cap of 1,000 keys. Past the
 * cap it dropped the rest without a word, empty ones counted, so a parameter sent after 1,000 `&`
 * slipped past every check of the parameters a call takes. The request line's own limit (Node's
 * header size, 16 KiB by default) bounds how many there can be.
 */
export function parseQueryString(text: string): Record<string, string | string[]> {
  return parse(text, undefined, undefined, { maxKeys: 0 }) as Record<string, string | string[]>;
}
