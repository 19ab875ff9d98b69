import type { Request } from 'express';

/**
 * True when a browser says the request comes from a page of another origin. Its `Sec-Fetch-Site`
 * decides when it sends one (every current browser does): only `same-origin` and `none` (an address
 * typed, a bookmark) are this site's own. Without it, its `Origin`: another host, or `null` (an
 * opaque origin, which a sandboxed frame of any site can have). A request with neither (curl, a
 * script) is not a browser's cross-site one. `Origin` alone cannot decide for a browser: a page
 * served with `Referrer-Policy: no-referrer` (helmet's default, so the console's own) makes the
 * browser send `Origin: null` with its own form's post. The host is Express's `req.host`: behind a
 * proxy trusted by ADMIN_TRUST_PROXY, the X-Forwarded-Host it sets; from anyone else, the Host
 * header.
 */
export function isCrossOrigin(req: Request): boolean {
  const site = req.get('sec-fetch-site');
  if (site !== undefined) return site !== 'same-origin' && site !== 'none';
  const origin = req.get('origin');
  if (origin === undefined) return false;
  if (origin === 'null') return true;
  try {
    return new URL(origin).host !== req.host;
  } catch {
    return true;
  }
}
