import type { ServerResponse } from 'node:http';
import { errorBody, type AppError } from '../../shared/errors/app-error.ts';
import { REQUEST_ID_HEADER } from '../../shared/http/request-id.ts';

/**
 * Answers `error` in the JSON error shape of every other refusal (shared/http/error-middleware.ts
 * writes the same status, headers and body through Express), with `securityHeaders` (helmet's, as
 * a flat name, value list) and the error's own headers. For the webhook path, which is answered
 * before Express sees the request (docs/decisions.md). Does nothing once an answer has started.
 */
export function writeErrorReply(
  res: ServerResponse,
  securityHeaders: readonly string[],
  error: AppError,
  /** A 5xx's id, as its log line names it (shared/http/request-id.ts). */
  requestId?: string,
): void {
  if (res.headersSent) return;
  const body = JSON.stringify(errorBody(error));
  res.writeHead(error.status, [
    ...securityHeaders,
    ...Object.entries(error.headers).flat(),
    ...(requestId === undefined ? [] : [REQUEST_ID_HEADER, requestId]),
    'content-type',
    'application/json; charset=utf-8',
    'content-length',
    String(Buffer.byteLength(body)),
  ]);
  res.end(body);
}
