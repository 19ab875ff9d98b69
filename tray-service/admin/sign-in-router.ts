import express, { Router, type Request, type Response } from 'express';
import { AppError } from '../../shared/errors/app-error.ts';
import type { AdminSessions } from './admin-sessions.ts';
import type { AdminSessionBody } from './api-schema/console-outputs.ts';
import { nothing } from './api-schema/admin-inputs.ts';
import { parseQuery } from './parse-query.ts';
import { verifiedButRefused } from '../http/auth/is-token-guess.ts';
import { isCrossOrigin } from './is-cross-origin.ts';
import { readCookies } from './read-cookies.ts';
import { forgetReload, reloadCrossSite } from './reload-cross-site.ts';
import { adminCaller, authenticateAdmin, type AdminAuthOptions } from './require-admin.ts';
import { ADMIN_SESSION_COOKIE, sessionCookieOptions } from './session-cookie.ts';
import { signInPage, signOutPage } from './sign-in-pages.ts';

export interface SignInRouterDeps {
  auth: AdminAuthOptions;
  sessions: AdminSessions;
  /** Where the admin router is mounted (/admin): the cookie's path and the pages' links. */
  mountPath: string;
  clock?: () => number;
  /**
   * Counts a wrong credential posted to the form against the caller's address, as a wrong bearer
   * token is counted (AUTH_FAILURE_LIMIT): the form answers with a page, not an error, so the
   * app's error handler never sees it.
   */
  failedSignIn?: (req: Request) => Promise<void>;
  /** ADMIN_BEHIND_TLS=on: the session cookie is always Secure. */
  behindTls?: boolean;
}

/**
 * Where a browser may be sent after signing in: a page of the admin listener only (the console, the
 * queue dashboard). Anything else (another site, `//host`, a backslash some browsers read as a
 * slash) would make the sign-in page an open redirect; and an API's GET (an export, a tail) would
 * start from another site's link, which reaches it as a same-origin navigation once the cross-site
 * page has reloaded itself (reload-cross-site.ts).
 */
export function safeNext(value: unknown, mountPath: string): string {
  const fallback = `${mountPath}/console`;
  if (typeof value !== 'string' || value.length > 2_000 || /[\\\s]|\/\//.test(value)) return fallback;
  if (!value.startsWith(`${mountPath}/`) && value !== mountPath && !value.startsWith(`${mountPath}?`))
    return fallback;
  // As the browser will read it: dot segments (`/admin/queues/../events/export`, also `%2e%2e`)
  // resolved, which the redirect passes on as written.
  const url = new URL(value, 'http://admin.invalid');
  const path = url.pathname;
  const queues = `${mountPath}/queues`;
  const page =
    path === mountPath ||
    path === fallback ||
    path === `${fallback}/` ||
    ((path === queues || path.startsWith(`${queues}/`)) &&
      !path.toLowerCase().startsWith(`${queues}/api/`.toLowerCase()));
  // The fragment too: the console keeps its place there (`#/events?event=...`), and no server sees it.
  return page && url.origin === 'http://admin.invalid' ? `${path}${url.search}${url.hash}` : fallback;
}

/**
 * One sign-in for every page of the admin listener (docs/operations.md#admin-authentication): the
 * form at /login opens a session in Redis and sets its cookie on the whole mount path; /logout ends
 * it everywhere; /session tells the signed-in page its CSRF token. The queue dashboard's old
 * addresses (/queues/login, /queues/logout) lead here.
 */
export function createSignInRouter(deps: SignInRouterDeps): Router {
  const clock = deps.clock ?? Date.now;
  const { mountPath } = deps;
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '16kb' });
  const html = (res: Response, status: number, body: string) => {
    res.status(status).type('html').set('Cache-Control', 'no-store').send(body);
  };

  router.get('/login', async (req, res) => {
    forgetReload(req, res, mountPath);
    if (reloadCrossSite(req, res, mountPath)) return;
    const target = safeNext(req.query.next, mountPath);
    // Signed in already: the form would end this session, and the other tabs' with it.
    const session = await adminCaller(req, deps).catch(() => undefined);
    if (session?.via === 'session') {
      res.redirect(303, target);
      return;
    }
    html(res, 200, signInPage(mountPath, target));
  });
  router.post('/login', form, async (req, res, next) => {
    const body = req.body as Record<string, unknown> | undefined;
    const token = typeof body?.token === 'string' ? body.token.trim() : '';
    const target = safeNext(body?.next ?? req.query.next, mountPath);
    // Another site's page can post this form without a cookie: its wrong tokens, counted against
    // the address of the admin whose browser sends them, would lock that admin out
    // (AUTH_FAILURE_LIMIT). Refused before anything is checked or counted.
    if (isCrossOrigin(req)) {
      html(
        res,
        403,
        signInPage(mountPath, target, 'Sign in from this page: a form sent from another site is refused.'),
      );
      return;
    }
    const refuse = () =>
      html(res, 401, signInPage(mountPath, target, 'That is not a valid admin credential.'));
    let admin: Awaited<ReturnType<typeof authenticateAdmin>>;
    try {
      admin = await authenticateAdmin(token, deps.auth);
    } catch (error) {
      if (!(error instanceof AppError && error.kind === 'UNAUTHORIZED')) return next(error);
      // A guess counts against the address (AUTH_FAILURE_LIMIT); an admin JWT that verified but
      // is refused (expired: pasted again from an old note) guesses nothing, as on the bearer path.
      if (!verifiedButRefused(error.cause instanceof AppError ? error.cause : error))
        await deps.failedSignIn?.(req);
      return refuse();
    }
    try {
      const { id, maxAgeMs } = await deps.sessions.open(admin, clock());
      // The browser's earlier session ends: a cookie it no longer holds must not stay valid. Only
      // once the new one is open: a sign-in that fails leaves the browser signed in as it was, and
      // no session it never got the cookie of.
      try {
        for (const previous of readCookies(req.get('cookie'), ADMIN_SESSION_COOKIE))
          await deps.sessions.close(previous);
      } catch (error) {
        await deps.sessions.close(id).catch(() => undefined);
        throw error;
      }
      res.cookie(ADMIN_SESSION_COOKIE, id, {
        ...sessionCookieOptions(req, mountPath, deps.behindTls),
        maxAge: maxAgeMs,
      });
      res.redirect(303, target);
    } catch (error) {
      // The credential passed a moment ago and expired before its session began: no guess.
      if (error instanceof AppError && error.kind === 'UNAUTHORIZED') return refuse();
      next(error);
    }
  });

  router.get('/logout', (_req, res) => html(res, 200, signOutPage(mountPath)));
  // No CSRF token: the page has none to give before it signs out. A form sent from another site is
  // refused instead: SameSite=Strict keeps the cookie from its post, but the answer's cleared
  // cookie would still reach the browser (a top-level navigation may set cookies), so any page
  // could sign an admin out, cutting their open tails and exports.
  router.post('/logout', async (req, res) => {
    if (isCrossOrigin(req)) {
      html(
        res,
        403,
        signOutPage(mountPath, 'Sign out from this page: a form sent from another site is refused.'),
      );
      return;
    }
    for (const id of readCookies(req.get('cookie'), ADMIN_SESSION_COOKIE)) await deps.sessions.close(id);
    res.clearCookie(ADMIN_SESSION_COOKIE, sessionCookieOptions(req, mountPath, deps.behindTls));
    res.redirect(303, `${mountPath}/login`);
  });

  router.get('/session', async (req, res) => {
    const caller = await adminCaller(req, { ...deps, clock });
    if (caller === undefined) {
      throw new AppError('UNAUTHORIZED', 'missing bearer token', {
        headers: { 'WWW-Authenticate': 'Bearer' },
      });
    }
    if (caller.via !== 'session') {
      throw new AppError('NOT_FOUND', 'no session: this request carries a bearer credential');
    }
    parseQuery(nothing, req.query);
    res.set('Cache-Control', 'no-store').json({
      csrfToken: caller.session.csrfToken,
      expiresAt: new Date(caller.session.expiresAt).toISOString(),
    } satisfies AdminSessionBody);
  });

  // The queue dashboard signed in at its own address before the sign-in covered the whole admin
  // listener; bookmarks and scripts that use it still work. 307 keeps a POST a POST, body included.
  const queues = `${mountPath}/queues`;
  router.all('/queues/login', (req, res) => {
    res.redirect(req.method === 'POST' ? 307 : 303, `${mountPath}/login?next=${encodeURIComponent(queues)}`);
  });
  router.all('/queues/logout', (req, res) => {
    res.redirect(req.method === 'POST' ? 307 : 303, `${mountPath}/logout`);
  });
  return router;
}
