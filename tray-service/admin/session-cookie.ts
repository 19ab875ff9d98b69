import type { Request } from 'express';

/** The admin session's cookie: one sign-in for every page under the admin mount path. */
export const ADMIN_SESSION_COOKIE = 'admin_session';

/**
 * HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it), limited to the
 * admin mount path, and Secure when the request came over https: req.secure follows the app's
 * `trust proxy` (ADMIN_TRUST_PROXY), so https at a trusted proxy counts; `behindTls`
 * (ADMIN_BEHIND_TLS=on) makes it Secure always.
 */
export function sessionCookieOptions(req: Request, mountPath: string, behindTls = false) {
  return { httpOnly: true, sameSite: 'strict' as const, secure: behindTls || req.secure, path: mountPath };
}
