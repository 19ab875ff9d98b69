import type { RequestHandler } from 'express';
import { helmetHeaders } from './helmet-headers.ts';

/**
 * `app.use(helmet())` with its headers computed once (helmetHeaders) and set in one call per
 * response. helmet walks twelve middlewares and twelve setHeader calls on every request: about
 * 0.04 ms of each tray API call under `bench:api`, where the whole call costs about 1 ms. For
 * helmet's defaults only: nothing in them depends on the request. `computed` lets an app that
 * also sends them outside Express (the receiver's webhook handler) compute them once.
 */
export function securityHeaders(computed: ReadonlyMap<string, string> = helmetHeaders()): RequestHandler {
  // Names and values in two plain arrays, set by index: res.setHeaders(map) walks a Map iterator,
  // which made an entry array and a result object per header on every response (about 1 KB a call).
  const names = [...computed.keys()];
  const values = [...computed.values()];
  return (_req, res, next) => {
    for (let i = 0; i < names.length; i += 1) res.setHeader(names[i] ?? '', values[i] ?? '');
    next();
  };
}
