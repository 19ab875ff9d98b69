import type { Request, Response } from 'express';
import { readCookies } from './read-cookies.ts';
import { ADMIN_SESSION_COOKIE } from './session-cookie.ts';

/**
 * Set with the reload page, SameSite=Lax (sent with a top-level navigation from anywhere): a
 * browser whose reload still came as cross-site and without the session cookie is not sent round
 * again, but on to the sign-in form.
 */
const RELOADED_COOKIE = 'admin_reloaded';

/** A page that loads itself again: its own navigation is same-site. No script: the CSP allows none. */
const RELOAD_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0"><title>Admin</title>
</head><body><p>Opening…</p></body></html>`;

/**
 * The session cookie is SameSite=Strict, so a link from another site (a chat message, a wiki)
 * opens an admin page without it: the page took the browser for signed out, and signing in again
 * there ended the session its other tabs held (their tails and exports cut). Such a navigation,
 * arriving without the cookie, gets a page that reloads itself instead; the reload is same-site and
 * carries the cookie, and a browser with no session goes on to the sign-in form from there. True
 * when it answered.
 */
export function reloadCrossSite(req: Request, res: Response, mountPath: string): boolean {
  if (req.method !== 'GET' || req.get('sec-fetch-site') !== 'cross-site') return false;
  const cookies = req.get('cookie');
  if (readCookies(cookies, ADMIN_SESSION_COOKIE, 1).length > 0) return false;
  if (readCookies(cookies, RELOADED_COOKIE, 1).length > 0) return false;
  res.cookie(RELOADED_COOKIE, '1', { httpOnly: true, sameSite: 'lax', maxAge: 30_000, path: mountPath });
  res.status(200).type('html').set('Cache-Control', 'no-store').send(RELOAD_PAGE);
  return true;
}

/**
 * The marker goes once a page comes from the admin listener itself (the reload, or any page
 * after it): kept its 30 s, it sent a second link from another site within them on to the form,
 * where signing in again ended the session the other tabs held. A reload that still comes as
 * cross-site keeps it, and goes on to the form as above.
 */
export function forgetReload(req: Request, res: Response, mountPath: string): void {
  if (req.get('sec-fetch-site') === 'cross-site') return;
  if (readCookies(req.get('cookie'), RELOADED_COOKIE, 1).length === 0) return;
  res.clearCookie(RELOADED_COOKIE, { httpOnly: true, sameSite: 'lax', path: mountPath });
}
