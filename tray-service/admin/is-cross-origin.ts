import type { Request } from 'express';

/**
 * True when a browser says the request comes from a page of another site: its `Origin` names
 * another host, or its `Sec-Fetch-Site` says `cross-site`. A request without either (curl, a
 * script) is not a browser's cross-site one. The host is Express's `req.host`: behind a proxy
 * trusted by ADMIN_TRUST_PROXY, the X-Forwarded-Host it sets (a proxy that sends its own Host
 * would otherwise make every same-origin call look foreign); from anyone else, the Host header.
 */
export function isCrossOrigin(req: Request): boolean {
  if (req.get('sec-fetch-site') === 'cross-site') return true;
  const origin = req.get('origin');
  if (origin === undefined) return false;
  try {
    return new URL(origin).host !== req.host;
  } catch {
    return true;
  }
}
