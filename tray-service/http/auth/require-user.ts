import type { RequestHandler, Response } from 'express';
import { AppError } from '../../../shared/errors/app-error.ts';
import { bearerToken, presentedBearerToken } from '../../../shared/http/bearer-token.ts';
import { verifiedUntil, type TokenVerifier } from './create-token-verifier.ts';

/**
 * Sets `res.locals.userId` from a verified bearer token, and `res.locals.tokenExpiresAt` (epoch
 * ms: `exp`, or the end of a maximum token age when sooner) so a long-lived response (a live stream) can end when the token does; 401 otherwise.
 */
export function requireUser(verify: TokenVerifier): RequestHandler {
  return async (req, res, next) => {
    const header = req.get('authorization');
    const token = bearerToken(header);
    if (token === undefined) {
      // One sent that no JWT could be (a mangled copy) is refused as the invalid token it is, as
      // the failed-authentication count takes it; only a call without one is told to send one.
      if (presentedBearerToken(header) !== undefined)
        throw new AppError('UNAUTHORIZED', 'token is invalid', {
          headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
        });
      throw new AppError('UNAUTHORIZED', 'missing bearer token (Authorization: Bearer <JWT>)', {
        headers: { 'WWW-Authenticate': 'Bearer' },
      });
    }
    const verified = await verify(token);
    res.locals.userId = verified.userId;
    const until = verifiedUntil(verified);
    if (until !== undefined) res.locals.tokenExpiresAt = until;
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
