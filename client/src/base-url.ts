/**
 * `baseUrl` as an absolute URL, for `caller` (its name starts the error). In a browser (or a
 * worker) it may be relative to the page, resolved as the page's fetch would resolve it: '' is the
 * page's origin, '/tray' a path on it. Anywhere else, or when it is no URL at all, a mistake would
 * show only as every call failing with fetch's own error, which names no option: it is thrown
 * instead. 'localhost:8081' (the scheme forgotten) parses as a URL of scheme `localhost:`, so the
 * scheme must be http(s); a query or a fragment would have every path joined after it. A user name
 * or password is refused without quoting the URL.
 */
export function absoluteBase(baseUrl: string, caller: string): string {
  // The joined form, as requests are made: '' + '/' names the origin's root, not the page.
  const root = `${baseUrl.replace(/\/+$/, '')}/`;
  const page = (globalThis as { location?: { href?: unknown } }).location?.href;
  const against = typeof page === 'string' ? page : undefined;
  const resolved = URL.canParse(root, against) ? new URL(root, against) : undefined;
  if (resolved === undefined || !/^https?:$/.test(resolved.protocol) || /[?#]/.test(baseUrl))
    throw new TypeError(
      `${caller}: baseUrl must be an http(s) URL without a query or fragment (in a browser, it may be relative to the page), got ${JSON.stringify(baseUrl)}`,
    );
  // fetch refuses a URL with credentials on every call, quoting it whole, password included.
  if (resolved.username !== '' || resolved.password !== '')
    throw new TypeError(
      `${caller}: baseUrl must not carry a user name or password (fetch refuses such a URL; the service takes the token getToken gives)`,
    );
  return resolved.href.replace(/\/+$/, '');
}
