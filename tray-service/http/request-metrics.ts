import type { RequestHandler } from 'express';
import { Counter, Histogram, type Registry } from 'prom-client';

/**
 * Methods the API has routes for (and OPTIONS, HEAD, which Express answers): any other (Node takes
 * some 34, PROPFIND, PURGE...) is labelled "other".
 */
const SERVED_METHODS: ReadonlySet<string> = new Set([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
]);

/**
 * Request count and latency per route. The route label is one of the API's fixed paths (none has
 * parameters) or "unmatched", and the method one of the served or "other", so a client cannot grow
 * the label set.
 */
export function requestMetrics(registry: Registry, routes: ReadonlySet<string>): RequestHandler {
  const labelNames = ['method', 'route', 'status'] as const;
  const count =
    (registry.getSingleMetric('tray_api_requests_total') as
      Counter<(typeof labelNames)[number]> | undefined) ??
    new Counter({
      name: 'tray_api_requests_total',
      help: 'HTTP requests by method, route and status',
      labelNames,
      registers: [registry],
    });
  const latency =
    (registry.getSingleMetric('tray_api_request_duration_seconds') as
      Histogram<(typeof labelNames)[number]> | undefined) ??
    new Histogram({
      name: 'tray_api_request_duration_seconds',
      help: 'HTTP request latency by method, route and status',
      labelNames,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
  // Express matches a route in any case and with one trailing slash (not `strict`, not
  // `case sensitive`): such a request is served, so labelled by the route's own path. A router
  // listing both `''` and `'/'` (`/block`, `/block/`) has one route: labelled without the slash,
  // whichever comes first in `routes`.
  const byMatch = new Map<string, string>();
  for (const route of routes) {
    const known = byMatch.get(matchOf(route));
    if (known === undefined || route.length < known.length) byMatch.set(matchOf(route), route);
  }
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    // Read now: mounted routers rewrite req.url while they handle the request.
    const route = byMatch.get(matchOf(req.path)) ?? 'unmatched';
    // 'close' ends every response (Node emits it after 'finish' too), also one whose client went
    // first, which is how most live streams end (a tab closed, a phone asleep): counted there, once.
    res.once('close', () => {
      // Nothing answered yet: the connection closed first (the client gave up waiting, or a
      // shutdown's grace ran out): nginx's 499, not a 200.
      const labels = {
        method: SERVED_METHODS.has(req.method) ? req.method : 'other',
        route,
        status: res.headersSent ? String(res.statusCode) : '499',
      };
      count.inc(labels);
      // A live stream lasts minutes or hours: its duration is not a request latency; nor is the
      // time a client waited before it left.
      if (!res.headersSent) return;
      if (String(res.getHeader('content-type') ?? '').startsWith('text/event-stream')) return;
      latency.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  };
}

/** A path as Express's default routing compares it: any case, without one trailing slash. */
function matchOf(path: string): string {
  const lower = path.toLowerCase();
  return lower.length > 1 && lower.endsWith('/') ? lower.slice(0, -1) : lower;
}
