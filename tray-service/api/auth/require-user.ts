import type { RequestHandler, Response } from 'express';
import { AppError } from '../../../shared/errors/app-error.ts';
import { bearerToken } from './bearer-token.ts';
import type { TokenVerifier } from './create-token-verifier.ts';

/** Sets `res.locals.userId` from a verified bearer token; 401 otherwise. */
export function requireUser(verify: TokenVerifier): RequestHandler {
  return async (req, res, next) => {
    const token = bearerToken(req.get('authorization'));
    if (token === undefined) {
      throw new AppError('UNAUTHORIZED', 'missing bearer token (Authorization: Bearer <JWT>)', {
        headers: { 'WWW-Authenticate': 'Bearer' },
      });
    }
    const { userId } = await verify(token);
    res.locals.userId = userId;
    next();
  };
}

/** The authenticated caller; only ever read from `res.locals`, never from the request. */
export function callerId(res: Response): string {
  const userId: unknown = res.locals.userId;
  if (typeof userId !== 'string') throw new Error('callerId: route is not behind requireUser');
  return userId;
}
