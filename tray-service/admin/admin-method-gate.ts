import type { RequestHandler } from 'express';
import { methodNotAllowed } from '../../shared/http/error-middleware.ts';

/** The admin pages, which the API document leaves out: their paths and methods. */
export const ADMIN_PAGES: Readonly<Record<string, readonly string[]>> = {
  '/admin/login': ['get', 'post'],
  '/admin/logout': ['get', 'post'],
  '/admin/console': ['get'],
  '/admin/console/assets/{name}': ['get'],
};

/**
 * GET paths that refuse HEAD (refuseHead): the tail's HEAD would open a subscription to nobody.
 * Their Allow leaves HEAD out.
 */
const WITHOUT_HEAD = new Set(['/admin/events/tail']);

/** A path item's keys that are operations (the rest: summary, parameters...). */
const HTTP_METHODS = new Set(['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE']);

interface KnownPath {
  pattern: RegExp;
  literal: boolean;
  allow: string;
}

/**
 * Answers 405 with Allow to a method an admin path does not serve, as the tray API's routes do.
 * The admin routers are mounted one after another, so a method one of them lacks fell through to
 * the next (GET /admin/events/replay became a look-up of the event "replay") or to the 404. The
 * paths and methods are the API document's (`paths`) and the pages'; a path no template matches
 * goes on to the routers (and their 404). Matched as Express routes them: any case, an optional
 * trailing slash, a parameter one segment; a literal path before any template (tail and replay
 * before an event key). HEAD goes with GET (but for WITHOUT_HEAD, whose route refuses it itself).
 * The queue dashboard's paths are its own.
 */
export function adminMethodGate(paths: Readonly<Record<string, object>>): RequestHandler {
  const known: KnownPath[] = Object.entries({ ...paths, ...ADMIN_PAGES })
    .map(([path, operations]) => {
      const methods = (Array.isArray(operations) ? operations : Object.keys(operations))
        .map((method) => String(method).toUpperCase())
        .filter((method) => HTTP_METHODS.has(method));
      if (methods.includes('GET') && !WITHOUT_HEAD.has(path)) methods.push('HEAD');
      const source = path
        .split('/')
        .map((segment) =>
          /^\{.+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
        )
        .join('/');
      return {
        pattern: new RegExp(`^${source}/?$`, 'i'),
        literal: !path.includes('{'),
        allow: [...new Set(methods)].sort().join(', '),
      };
    })
    .sort((a, b) => Number(b.literal) - Number(a.literal));
  return (req, res, next) => {
    const path = known.find((candidate) => candidate.pattern.test(req.path));
    if (path === undefined || path.allow.split(', ').includes(req.method)) {
      next();
      return;
    }
    methodNotAllowed(path.allow.split(', '))(req, res, next);
  };
}
