import type { Request, RequestHandler } from 'express';
import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors/app-error.ts';
import { presentedBearerToken } from './bearer-token.ts';

/**
 * Who may read `/metrics` on a listener. `off`: nobody (the route does not exist there); `token`:
 * the bearer of METRICS_TOKEN; `open`: anyone who can connect, for the loopback METRICS_PORT
 * listener only. Metrics name routes, queue depths and error rates: not for the public.
 */
export type MetricsAccess = { kind: 'off' } | { kind: 'open' } | { kind: 'token'; token: string };

/** The access on the service's own port, from METRICS_TOKEN (docs/operations.md#health-metrics-and-shutdown). */
export function metricsAccessFor(token: string | undefined): MetricsAccess {
  return token === undefined ? { kind: 'off' } : { kind: 'token', token };
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * The bearer token a scrape presents, if any, read as the tray's failed-login count reads it (scheme
 * in any case, spaces around). Read more narrowly here, `bearer <the right token>` was refused while
 * the tray counted it a wrong guess, and enough scrapes locked the scraper's address out of the API.
 */
const presentedToken = (req: Request): string | undefined => presentedBearerToken(req.get('authorization'));

/**
 * Whether a refused scrape guessed at METRICS_TOKEN, and so counts against its address: a bearer
 * token sent. Not a call without one (or with another scheme), which another site's page can make
 * from a visitor's browser (an image) to lock the visitor's address out.
 */
export const guessedMetricsToken = (req: Request): boolean => presentedToken(req) !== undefined;

/** Requires `Authorization: Bearer <token>`, compared in constant time; 401 otherwise. */
export function requireMetricsToken(token: string): RequestHandler {
  const expected = digest(token);
  return (req, _res, next) => {
    const presented = presentedToken(req);
    if (presented === undefined || !timingSafeEqual(digest(presented), expected)) {
      throw new AppError('UNAUTHORIZED', 'metrics need the bearer token METRICS_TOKEN', {
        headers: { 'WWW-Authenticate': 'Bearer' },
      });
    }
    next();
  };
}
