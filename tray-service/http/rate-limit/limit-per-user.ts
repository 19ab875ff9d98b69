import type { RequestHandler } from 'express';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { AppError } from '../../../shared/errors/app-error.ts';
import { callerId } from '../auth/require-user.ts';

/** Counts one call for the authenticated caller; over the limit: 429 with the platform's 400311 (docs/contract.md#errors). */
export function limitPerUser(limiter: RateLimiterAbstract): RequestHandler {
  return async (_req, res, next) => {
    try {
      const state = await limiter.consume(callerId(res));
      res.set({
        'X-RateLimit-Limit': String(limiter.points),
        'X-RateLimit-Remaining': String(state.remainingPoints),
      });
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) {
        throw new AppError('RATE_LIMITED', 'RateLimit Exceed', {
          headers: {
            'Retry-After': String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000))),
            'X-RateLimit-Limit': String(limiter.points),
            'X-RateLimit-Remaining': '0',
          },
        });
      }
      throw new AppError('UNAVAILABLE', 'rate limiter is unavailable, try again later', { cause: rejection });
    }
    next();
  };
}
