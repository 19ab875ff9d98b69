import type { RequestHandler } from 'express';
import { AppError } from '../../../shared/errors/app-error.ts';
import type { BanView } from './ban-cache.ts';
import { callerId } from './require-user.ts';

/**
 * A globally banned user cannot authenticate until the ban is lifted, so their still valid tokens
 * are refused with 401 and `invalid_token` like an invalid one, after requireUser; the code
 * (401001, not 401000) tells a client that another token will not help (docs/tray-rules.md#global-bans).
 */
export function refuseBanned(bans: BanView): RequestHandler {
  return (_req, res, next) => {
    if (bans.isBanned(callerId(res))) {
      throw new AppError('BANNED', 'user is globally banned', {
        headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
      });
    }
    next();
  };
}
