import express, { type RequestHandler } from 'express';
import { AppError } from '../../shared/errors/app-error.ts';
import { BODY_LIMIT_KB } from './api-schema/body-limit.ts';

/** Small bodies only (api-schema/body-limit.ts). */
const BODY_LIMIT = `${BODY_LIMIT_KB}kb`;

const hasBody = (headers: Record<string, unknown>) =>
  headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;

const notJson = () => new AppError('UNSUPPORTED_MEDIA_TYPE', 'request body must be application/json');

/** Requests whose body, once read, had no bytes. */
const emptyBodies = new WeakSet<object>();

/**
 * A body, when sent, must be JSON (415 otherwise); then it is parsed, 413 above the limit, and must
 * be an object or an array (whose schema then names what is wrong). The parser is not strict: its
 * strict mode calls `null`, `5` or `"x"` invalid JSON, which they are not; they are refused here,
 * where no route can take a JSON `null` for no body at all. A body of no bytes is no body, whatever
 * its headers say: the parser would make it `{}`, and a route that takes its input from the query
 * when no body is sent (DELETE v3/mutes) must not refuse a client that sets a JSON content type on
 * every call.
 */
export function jsonBody(limit: string = BODY_LIMIT): RequestHandler[] {
  // A body framed in chunks with no content type may hold no bytes (a client that frames every
  // call so): read first, then refused only if it held some.
  const readUntyped = express.raw({ limit, type: (req) => req.headers['content-type'] === undefined });
  return [
    (req, res, next) => {
      if (!hasBody(req.headers) || req.is('application/json')) return next();
      if (req.headers['content-type'] !== undefined) return next(notJson());
      readUntyped(req, res, (error?: unknown) => {
        if (error !== undefined) return next(error);
        const bytes: unknown = req.body;
        if (Buffer.isBuffer(bytes) && bytes.length > 0) return next(notJson());
        // No bytes: no body. express.json below finds the body read and leaves it.
        emptyBodies.add(req);
        next();
      });
    },
    express.json({
      limit,
      strict: false,
      verify: (req, _res, bytes) => {
        if (bytes.length === 0) emptyBodies.add(req);
      },
    }),
    (req, _res, next) => {
      if (emptyBodies.has(req)) req.body = undefined;
      const body: unknown = req.body;
      if (body !== undefined && (typeof body !== 'object' || body === null)) {
        throw new AppError('VALIDATION', 'body: expected a JSON object');
      }
      next();
    },
  ];
}
