import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { AppError } from '../../shared/errors/app-error.ts';
import type { TokenVerifier } from '../http/auth/create-token-verifier.ts';

export type { TokenVerifier };

/**
 * The admin credentials: never a user token. An admin is whoever presents ADMIN_TOKEN, or a JWT
 * made for the admin audience and issuer (ADMIN_JWT_AUDIENCE, ADMIN_JWT_ISSUER); a `role` claim
 * in a user's token decides nothing (docs/operations.md#admin-authentication).
 */
export interface AdminAuthOptions {
  /** The operators' shared bearer secret; undefined: not accepted. */
  adminToken?: string | undefined;
  /** Verifies admin JWTs (the admin audience and issuer); undefined: admin JWTs are not accepted. */
  verifyAdminJwt?: TokenVerifier | undefined;
}

/** Who made an admin request, and until when the credential holds (epoch ms; for sessions). */
export type AdminPrincipal = { kind: 'token' } | { kind: 'jwt'; subject: string; expiresAt: number };

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
    const { userId, claims } = await options.verifyAdminJwt(token);
    // The verifier requires `exp`; it bounds any session opened with this token.
    return { kind: 'jwt', subject: userId, expiresAt: (claims.exp ?? 0) * 1000 };
  } catch (error) {
    // 503 (token keys unavailable) stands; any other failure is "not an admin".
    if (error instanceof AppError && error.kind === 'UNAVAILABLE') throw error;
    throw new AppError('UNAUTHORIZED', 'invalid admin token', { cause: error });
  }
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
