import type { ErrorRequestHandler } from 'express';
import { AppError } from '../../shared/errors/app-error.ts';
import { isRedisUnavailable } from '../../shared/redis/redis-failure.ts';

/**
 * Redis's "cannot serve this now" becomes 503 with Retry-After, as the database's does
 * (map-store-errors.ts): a call that needs Redis (an admin session, a replay's progress) while it
 * is unreachable is not an internal error. Everything else goes on to the error middleware.
 */
export const mapRedisErrors: ErrorRequestHandler = (error: unknown, _req, _res, next) => {
  next(
    isRedisUnavailable(error)
      ? new AppError('UNAVAILABLE', 'Redis is unavailable, try again later', {
          cause: error,
          headers: { 'Retry-After': '5' },
        })
      : error,
  );
};
