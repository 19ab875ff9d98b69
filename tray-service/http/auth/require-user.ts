import type { RequestHandler, Response } from 'express';
import { AppError } from '../../../shared/errors/app-error.ts';
import { bearerToken } from './bearer-token.ts';
import type { TokenVerifier } from './create-token-verifier.ts';

/**
 * Sets `res.locals.userId` from a verified bearer token, and `res.locals.tokenExpiresAt` (epoch
 * ms, from `exp`) so a long-lived response (a live stream) can end when the token does; 401 otherwise.
 */
export function requireUser(verify: TokenVerifier): RequestHandler {
  return async (req, res, next) => {
    const token = bearerToken(req.get('authorization'));
    if (token === undefined) {
      throw new AppError('UNAUTHORIZED', 'missing bearer token (Authorization: Bearer <JWT>)', {
        headers: { 'WWW-Authenticate': 'Bearer' },
      });
    }
    const { userId, claims } = await verify(token);
    res.locals.userId = userId;
    if (typeof claims.exp === 'number') res.locals.tokenExpiresAt = claims.exp * 1000;
    next();
  };
}

/** The authenticated caller; only ever read from `res.locals`, never from the request. */
export function callerId(res: Response): string {
  const userId: unknown = res.locals.userId;
  if (typeof userId !== 'string') throw new Error('callerId: route is not behind requireUser');
  return userId;
}

/** When the caller's credential expires (epoch ms), if it said; set by requireUser or a ticket. */
export function callerExpiresAt(res: Response): number | undefined {
  const at: unknown = res.locals.tokenExpiresAt;
  return typeof at === 'number' && Number.isFinite(at) ? at : undefined;
}
