import type { RequestHandler } from 'express';
import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors/app-error.ts';

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

/** Requires `Authorization: Bearer <token>`, compared in constant time; 401 otherwise. */
export function requireMetricsToken(token: string): RequestHandler {
  const expected = digest(token);
  return (req, _res, next) => {
    const presented = /^Bearer (\S+)$/.exec(req.get('authorization') ?? '')?.[1];
    if (presented === undefined || !timingSafeEqual(digest(presented), expected)) {
      throw new AppError('UNAUTHORIZED', 'metrics need the bearer token METRICS_TOKEN', {
        headers: { 'WWW-Authenticate': 'Bearer' },
      });
    }
    next();
  };
}
