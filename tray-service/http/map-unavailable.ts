import type { ErrorRequestHandler } from 'express';
import { AppError } from '../../shared/errors/app-error.ts';

/**
 * An error handler that turns a backing server's "cannot serve this now" into 503 with
 * Retry-After and the JSON error shape (`message` names the server), and passes everything else
 * on to the error middleware. One per server the service depends on (map-store-errors.ts,
 * map-redis-errors.ts).
 */
export const mapUnavailable =
  (isUnavailable: (error: unknown) => boolean, message: string): ErrorRequestHandler =>
  (error: unknown, _req, _res, next) => {
    next(
      isUnavailable(error)
        ? new AppError('UNAVAILABLE', message, { cause: error, headers: { 'Retry-After': '5' } })
        : error,
    );
  };
