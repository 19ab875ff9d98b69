import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { AppError } from '../../shared/errors/app-error.ts';

import type { TokenVerifier } from '../api/auth/create-token-verifier.ts';

/** The tray API's token verifier: the admin API accepts the same user tokens. */
export type { TokenVerifier };

export interface AdminAuthOptions {
  /** The operators' shared token; undefined: only admin JWTs are admitted. */
  adminToken?: string;
  verifyToken?: TokenVerifier;
  /** JWT claim holding the role(s), and the role value meaning "admin". */
  roleClaim: string;
  role: string;
}

/** Who made an admin request, for logs and audit. */
export type AdminPrincipal = { kind: 'token' } | { kind: 'user'; userId: string };

/** Constant-time comparison of two strings of any length (hashing equalises the lengths). */
export function safeEqual(a: string, b: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(a), digest(b));
}

function hasRole(claims: Record<string, unknown>, claim: string, role: string): boolean {
  const value = claims[claim];
  return value === role || (Array.isArray(value) && value.includes(role));
}

export function bearerToken(req: Request): string | undefined {
  const match = /^Bearer ([^\s]+)\s*$/i.exec(req.get('authorization') ?? '');
  return match?.[1];
}

/**
 * Resolves a presented token to an admin, or throws: 401 when the token proves nobody,
 * 403 when it proves a user who is not an admin (ordinary user tokens get 403).
 */
export async function authenticateAdmin(token: string, options: AdminAuthOptions): Promise<AdminPrincipal> {
  if (options.adminToken !== undefined && safeEqual(token, options.adminToken)) return { kind: 'token' };
  if (!options.verifyToken) throw new AppError('UNAUTHORIZED', 'invalid admin token');
  let user: Awaited<ReturnType<TokenVerifier>>;
  try {
    user = await options.verifyToken(token);
  } catch (error) {
    // The verifier's own 401 (with its reason) or 503 (token keys unavailable) stands.
    if (error instanceof AppError) throw error;
    throw new AppError('UNAUTHORIZED', 'invalid or expired token', { cause: error });
  }
  if (!hasRole(user.claims, options.roleClaim, options.role)) {
    throw new AppError('FORBIDDEN', 'this endpoint is for administrators only');
  }
  return { kind: 'user', userId: user.userId };
}

/** Express adapter: `Authorization: Bearer <ADMIN_TOKEN or admin JWT>`. */
export function requireAdmin(options: AdminAuthOptions): RequestHandler {
  return async (req, res, next) => {
    const token = bearerToken(req);
    if (token === undefined) {
      next(
        new AppError('UNAUTHORIZED', 'missing bearer token', { headers: { 'WWW-Authenticate': 'Bearer' } }),
      );
      return;
    }
    try {
      res.locals.admin = await authenticateAdmin(token, options);
      next();
    } catch (error) {
      next(error);
    }
  };
}
