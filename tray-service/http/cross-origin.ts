import cors from 'cors';
import type { RequestHandler } from 'express';
import type { CorsOrigins } from '../../shared/config/cors-origins.ts';

/** How long a browser may reuse a preflight's answer, in seconds. */
const PREFLIGHT_MAX_AGE_S = 600;

/**
 * CORS for the tray API (TRAY_CORS_ORIGINS): a page of an allowed origin may call it from a browser
 * and read the answers; every other origin is left as without CORS (no header: the browser keeps
 * the answer from the page, and a preflight meets the route's own 405). What a page may send is
 * what the client package sends: the token (Authorization), a JSON body, a stream's resume id and
 * the language; what it may read beyond the safelisted headers is what the service tells it:
 * Retry-After (the client's retries of 429 and 503 honour it) with the Date it is measured from
 * when it names a date, the rate limit's X-RateLimit-Limit
 * and X-RateLimit-Remaining, the block list's Deprecation and Sunset, and X-Request-Id. No credentials: the token is a header, never a cookie.
 */
export function crossOrigin(origins: CorsOrigins): RequestHandler {
  const allowed = origins === '*' ? undefined : new Set(origins);
  if (allowed?.size === 0) return (_req, _res, next) => next();
  const answer = cors({
    // A listed origin is echoed (with Vary: Origin), the others never reach here.
    origin: origins === '*' ? '*' : true,
    methods: ['GET', 'POST', 'PUT', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Last-Event-ID', 'Accept-Language'],
    exposedHeaders: [
      'Retry-After',
      'Date',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'Deprecation',
      'Sunset',
      // What a page quotes to operators for a 5xx, to find it in the service's log.
      'X-Request-Id',
    ],
    maxAge: PREFLIGHT_MAX_AGE_S,
  });
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (origin !== undefined && (allowed === undefined || allowed.has(origin))) {
      answer(req, res, next);
      return;
    }
    // A cache between must not hand a listed origin an answer made for another.
    if (allowed !== undefined) res.vary('Origin');
    next();
  };
}
