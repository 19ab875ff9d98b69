import { forgetReload, reloadCrossSite } from './reload-cross-site.ts';
import type { AdminPrincipal } from './admin-principal.ts';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { AppError } from '../../shared/errors/app-error.ts';
import { verifiedUntil } from '../http/auth/create-token-verifier.ts';
import type { AdminJwtVerifier } from './admin-jwt-verifier.ts';
import type { AdminSession, AdminSessions } from './admin-sessions.ts';
import { readCookies } from './read-cookies.ts';
import { ADMIN_SESSION_COOKIE } from './session-cookie.ts';
import { isCrossOrigin } from './is-cross-origin.ts';

/**
 * The admin credentials: never a user token. An admin is whoever presents ADMIN_TOKEN, or a JWT
 * made for the admin audience and issuer (ADMIN_JWT_AUDIENCE, ADMIN_JWT_ISSUER); a `role` claim
 * in a user's token decides nothing (docs/operations.md#admin-authentication).
 */
export interface AdminAuthOptions {
  /** The operators' shared bearer secret; undefined: not accepted. */
  adminToken?: string | undefined;
  /** Verifies admin JWTs (the admin audience and issuer); undefined: admin JWTs are not accepted. */
  verifyAdminJwt?: AdminJwtVerifier | undefined;
}

/** Constant-time comparison of two strings of any length (hashing equalises the lengths). */
export function safeEqual(a: string, b: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(a), digest(b));
}

export function bearerToken(req: Request): string | undefined {
  const match = /^Bearer ([^\s]+)\s*$/i.exec(req.get('authorization') ?? '');
  return match?.[1];
}

/** True when at least one admin credential is configured; otherwise the admin API is off. */
export function adminAuthConfigured(options: AdminAuthOptions): boolean {
  return options.adminToken !== undefined || options.verifyAdminJwt !== undefined;
}

/** Resolves a presented token to an admin, or throws 401: anything else proves no admin. */
export async function authenticateAdmin(token: string, options: AdminAuthOptions): Promise<AdminPrincipal> {
  if (options.adminToken !== undefined && safeEqual(token, options.adminToken)) return { kind: 'token' };
  if (options.verifyAdminJwt === undefined) throw new AppError('UNAUTHORIZED', 'invalid admin token');
  try {
    const verified = await options.verifyAdminJwt(token);
    // The verifier requires `exp`; it (or ADMIN_JWT_MAX_TOKEN_AGE, when sooner) bounds any session
    // opened with this token.
    return { kind: 'jwt', subject: verified.userId, expiresAt: verifiedUntil(verified) ?? 0 };
  } catch (error) {
    // 503 (token keys unavailable) stands; any other failure is "not an admin".
    if (error instanceof AppError && error.kind === 'UNAVAILABLE') throw error;
    throw new AppError('UNAUTHORIZED', 'invalid admin token', { cause: error });
  }
}

/** How a request proved it comes from an admin. */
export type AdminCaller =
  | { via: 'bearer'; principal: AdminPrincipal }
  | { via: 'session'; principal: AdminPrincipal; session: AdminSession };

export interface AdminGuardOptions {
  auth: AdminAuthOptions;
  sessions: AdminSessions;
  /** Where the admin router is mounted: the sign-in page is `${mountPath}/login`. */
  mountPath: string;
  clock?: () => number;
}

/** Methods that change nothing: a session cookie alone is enough for them. */
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The admin behind a request: its bearer credential when it sends one (a wrong or malformed one is
 * a 401, never a fall back to the cookie), else its session cookie; undefined with neither.
 */
export async function adminCaller(
  req: Request,
  options: AdminGuardOptions,
): Promise<AdminCaller | undefined> {
  const token = bearerToken(req);
  if (token !== undefined) return { via: 'bearer', principal: await authenticateAdmin(token, options.auth) };
  // A bearer header of the wrong shape is a wrong credential too, not a missing one: the cookie
  // beside it would otherwise decide. Another scheme (a proxy's Basic in front of the console) is
  // not the admin's, and leaves the cookie to decide.
  if (/^Bearer(?:\s|$)/i.test(req.get('authorization') ?? '')) throw malformedBearer();
  // Every value sent: one planted beside the session's (read-cookies.ts) must not hide it.
  for (const id of readCookies(req.get('cookie'), ADMIN_SESSION_COOKIE)) {
    const session = await options.sessions.find(id, (options.clock ?? Date.now)());
    if (session) return { via: 'session', principal: session.principal, session };
  }
  return undefined;
}

/** The admin that requireAdmin admitted; only ever read from `res.locals`. */
export function admittedCaller(res: Response): AdminCaller {
  const caller: unknown = res.locals.adminCaller;
  if (caller === undefined) throw unauthenticated();
  return caller as AdminCaller;
}

/** When the caller's proof lapses (epoch ms): its session's end, its JWT's `exp`; undefined for ADMIN_TOKEN. */
export function callerExpiresAt(caller: AdminCaller): number | undefined {
  if (caller.via === 'session') return caller.session.expiresAt;
  return caller.principal.kind === 'jwt' ? caller.principal.expiresAt : undefined;
}

/**
 * Whether the request still proves an admin now: its session not signed out or expired, its JWT
 * not expired. For streams, which outlive the check made when they opened. undefined when the
 * check cannot be made (Redis unreachable, the JWT key set unavailable): nothing can have signed
 * the session out meanwhile (signing out deletes it from that same Redis), its end is timed apart
 * from this check, and the caller asks again at its next beat. Counting that as "signed out" ended
 * every open tail at a Redis blip, and the console then asked to sign in again.
 */
export async function stillAdmin(req: Request, options: AdminGuardOptions): Promise<boolean | undefined> {
  try {
    return (await adminCaller(req, options)) !== undefined;
  } catch (error) {
    // A credential refused (401) is a no; anything else says nothing about the credential.
    if (error instanceof AppError && error.kind === 'UNAUTHORIZED') return false;
    return undefined;
  }
}

const unauthenticated = () =>
  new AppError('UNAUTHORIZED', 'missing bearer token', { headers: { 'WWW-Authenticate': 'Bearer' } });

const malformedBearer = () =>
  new AppError('UNAUTHORIZED', 'malformed bearer credential (Authorization: Bearer <token>, one token)', {
    headers: { 'WWW-Authenticate': 'Bearer error="invalid_request"' },
  });

/**
 * Admits `caller` (or throws): 401 without one; 403 for a cookie's request from another site's page
 * (but a page load: a link to the console), and for a cookie's changing request without its CSRF
 * token.
 */
function admit(
  req: Request,
  res: Response,
  caller: AdminCaller | undefined,
  { csrf, pageLoad }: { csrf: boolean; pageLoad: boolean },
): void {
  if (caller === undefined) throw unauthenticated();
  // SameSite=Strict still sends the cookie from a same-site page (another application on a sibling
  // host or port): an image or a no-cors fetch there could start exports and tails, which no
  // CSRF token guards (GETs), and use the slots real operators need.
  if (caller.via === 'session' && !pageLoad && isCrossOrigin(req)) {
    throw new AppError(
      'FORBIDDEN',
      'a request from another site’s page cannot use the admin session (Sec-Fetch-Site, Origin)',
    );
  }
  if (csrf && caller.via === 'session' && !SAFE.has(req.method)) {
    if (!safeEqual(req.get('x-csrf-token') ?? '', caller.session.csrfToken)) {
      throw new AppError('FORBIDDEN', 'x-csrf-token: missing, or not this session’s (GET /admin/session)');
    }
  }
  res.locals.admin = caller.principal;
  res.locals.adminCaller = caller;
}

/**
 * Express adapter of the JSON paths: `Authorization: Bearer <ADMIN_TOKEN or admin JWT>`, or the
 * session cookie of a signed-in browser. A changing request (POST, PUT, PATCH, DELETE) made with
 * the cookie must carry the session's CSRF token in `x-csrf-token` (GET /admin/session hands it to
 * the page): the cookie is SameSite=Strict already, and the header is a second lock that no form
 * or image of another origin can send. Bearer requests need no CSRF token: no browser adds a
 * bearer header by itself.
 */
export function requireAdmin(options: AdminGuardOptions): RequestHandler {
  return async (req, res, next) => {
    try {
      admit(req, res, await adminCaller(req, options), { csrf: true, pageLoad: false });
      next();
    } catch (error) {
      next(error);
    }
  };
}

/**
 * Express adapter of the admin pages (the console, the queue dashboard): like requireAdmin, but a
 * browser asking for a page without a session is sent to the sign-in form (303), which brings it
 * back here once signed in; other calls still get the JSON 401. `csrf: false` only for a third
 * party's page that cannot send the header (the queue dashboard, whose writes are off by default).
 */
export function requireAdminPage(options: AdminGuardOptions & { csrf?: boolean }): RequestHandler {
  return async (req, res, next) => {
    try {
      forgetReload(req, res, options.mountPath);
      const caller = await adminCaller(req, options);
      // Express routes paths case-insensitively: `/API/queues` reaches the dashboard's API too.
      const pageLoad =
        req.method === 'GET' && !req.path.toLowerCase().startsWith('/api/') && req.accepts('html') !== false;
      if (caller === undefined && pageLoad) {
        if (reloadCrossSite(req, res, options.mountPath)) return;
        res.redirect(303, `${options.mountPath}/login?next=${encodeURIComponent(req.originalUrl)}`);
        return;
      }
      admit(req, res, caller, { csrf: options.csrf ?? true, pageLoad });
      next();
    } catch (error) {
      next(error);
    }
  };
}
