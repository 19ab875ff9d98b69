import type { RequestHandler } from 'express';
import { AppError } from '../../../shared/errors/app-error.ts';
import type { BanView } from './ban-cache.ts';
import { callerId } from './require-user.ts';

/**
 * A globally banned user cannot authenticate until the ban is lifted, so their still valid tokens
 * are refused exactly like an invalid one (401, `invalid_token`), after requireUser.
 */
export function refuseBanned(bans: BanView): RequestHandler {
  return (_req, res, next) => {
    if (bans.isBanned(callerId(res))) {
      throw new AppError('UNAUTHORIZED', 'user is globally banned', {
        headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
      });
    }
    next();
  };
}
