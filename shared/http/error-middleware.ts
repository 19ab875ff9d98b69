import type { ErrorRequestHandler, RequestHandler } from 'express';
import { AppError, errorBody } from '../errors/app-error.ts';
import type { Logger } from '../logging/create-logger.ts';
import { REQUEST_ID_HEADER, requestIdOf } from './request-id.ts';
import { createLogThrottle } from '../logging/log-throttle.ts';

/** Errors raised by Express's own body parsers carry a `type` and an HTTP status. */
interface BodyParserError {
  type: string;
  status?: number;
}

function isBodyParserError(error: unknown): error is BodyParserError {
  return (
    typeof error === 'object' && error !== null && typeof (error as { type?: unknown }).type === 'string'
  );
}

/** The client-error status (4xx) an error was raised with, as http-errors and Express set it. */
function clientErrorStatus(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { status, statusCode } = error as { status?: unknown; statusCode?: unknown };
  const value = typeof status === 'number' ? status : statusCode;
  return typeof value === 'number' && value >= 400 && value <= 499 ? value : undefined;
}

/**
 * Maps anything thrown to the one JSON error shape. Unknown errors become a bare 500: no stack, no
 * detail. A 4xx that Express raised stays the client's mistake, with a fixed message: the
 * original's (a zlib message, the raw path) is internals, or the client's own input echoed back.
 */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (isBodyParserError(error)) {
    switch (error.type) {
      case 'entity.too.large':
        return new AppError('PAYLOAD_TOO_LARGE', 'request body is too large');
      case 'entity.parse.failed':
        return new AppError('BAD_REQUEST', 'request body is not valid JSON');
      case 'encoding.unsupported':
        return new AppError('UNSUPPORTED_MEDIA_TYPE', 'content encoding is not supported');
      case 'charset.unsupported':
        return new AppError('UNSUPPORTED_MEDIA_TYPE', 'charset is not supported');
      case 'request.aborted':
        return new AppError('BAD_REQUEST', 'request was aborted');
    }
  }
  const status = clientErrorStatus(error);
  if (status !== undefined) {
    // The router's, for a path parameter whose percent-encoding does not decode.
    if (error instanceof URIError)
      return new AppError('BAD_REQUEST', 'malformed URL encoding', { cause: error });
    // Otherwise a body parser's without a type handled above (a body whose Content-Encoding does
    // not decode, a form with too many fields): the status it chose, where the service has a code.
    if (status === 413)
      return new AppError('PAYLOAD_TOO_LARGE', 'request body is too large', { cause: error });
    if (status === 415)
      return new AppError('UNSUPPORTED_MEDIA_TYPE', "request body's type or encoding is not supported", {
        cause: error,
      });
    return new AppError('BAD_REQUEST', 'request body could not be decoded', { cause: error });
  }
  return new AppError('INTERNAL', 'internal error', { cause: error });
}

/** How often one reason for a 503 is logged at most, by default. */
export const UNAVAILABLE_LOG_EVERY_MS = 10_000;

/**
 * Answers every error in the JSON error shape and logs the server's: each 500 (a defect of the
 * service's own) every time, each reason for a 503 (a dependency down: every request meets it, an
 * anonymous one too) at most once per `everyMs`, with how many went unsaid before it. Each 5xx
 * answers the X-Request-Id its log line carries (request-id.ts).
 */
export function errorMiddleware(
  logger: Logger,
  { everyMs = UNAVAILABLE_LOG_EVERY_MS }: { everyMs?: number } = {},
): ErrorRequestHandler {
  const unavailable = createLogThrottle(everyMs);
  return (error: unknown, req, res, _next) => {
    const appError = toAppError(error);
    const requestId = appError.status >= 500 ? requestIdOf(req.headers) : undefined;
    if (requestId !== undefined) {
      const unsaidBefore = appError.kind === 'UNAVAILABLE' ? unavailable(appError.message) : 0;
      if (unsaidBefore !== undefined)
        logger.error(
          { err: appError.cause ?? appError, requestId, method: req.method, path: req.path, unsaidBefore },
          appError.message,
        );
    }
    // An answer already begun cannot become an error's: cut, so the client sees it cut short
    // rather than waiting on it for good (and the shutdown's drain with it).
    if (res.headersSent) {
      if (!res.writableEnded) res.destroy();
      return;
    }
    // Written here, not by res.json: Express would tag the error with an ETag, which a cache or a
    // client keeping tags would take for a version of the resource. The Content-Type is set
    // explicitly, as a route may have set its own for the answer it meant to give (an event
    // stream's, an export's). Node leaves out the body of an answer to HEAD.
    const text = JSON.stringify(errorBody(appError));
    res
      .status(appError.status)
      .set(appError.headers)
      .set(requestId === undefined ? {} : { [REQUEST_ID_HEADER]: requestId })
      .set('Content-Type', 'application/json; charset=utf-8')
      .set('Content-Length', String(Buffer.byteLength(text)))
      .end(text);
  };
}

export const notFound: RequestHandler = (req, _res, next) => {
  next(new AppError('NOT_FOUND', `no route for ${req.method} ${req.path}`));
};

/** Answers 405 with the allowed methods, for a path that exists but not with this method. */
export function methodNotAllowed(allowed: readonly string[]): RequestHandler {
  return (req, _res, next) => {
    next(
      new AppError('METHOD_NOT_ALLOWED', `method ${req.method} is not allowed here`, {
        headers: { Allow: allowed.join(', ') },
      }),
    );
  };
}

/**
 * Refuses HEAD on a GET that changes something (405, Allow: GET): Express answers HEAD with a
 * route's GET handlers, so a link checker or a proxy sending HEAD would make the change.
 */
export const refuseHead: RequestHandler = (req, res, next) => {
  if (req.method === 'HEAD') methodNotAllowed(['GET'])(req, res, next);
  else next();
};
