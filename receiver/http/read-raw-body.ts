import type { IncomingMessage, ServerResponse } from 'node:http';
import { awaitsContinue, continueRequest } from '../../shared/http/expect-continue.ts';
import { AppError } from '../../shared/errors/app-error.ts';

/**
 * Reads the request body as the exact bytes sent (the signature covers them), keeping at most
 * `limit` bytes whether or not a Content-Length was given (chunked bodies have none). A compressed
 * body never gets here: the decision's `screen` refuses it (check 3).
 *
 * A body over the limit is refused, but only after the rest of it was read and thrown away (as
 * body-parser does): closing a socket with unread data makes the kernel send a reset, and the client
 * may then never see the 413. Nothing is buffered while draining, and the server's requestTimeout
 * bounds how long a client can keep sending. A sender waiting for `100 Continue` (listen's
 * deferContinue) is sent it here, once the body is to be read; one that declared a body over the
 * limit is refused without it.
 */
export function readRawBody(req: IncomingMessage, res: ServerResponse, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit)
    // A sender still waiting to be invited (listen's deferContinue) has sent none of it: refused
    // unsent, the body never invited.
    return awaitsContinue(req) ? Promise.reject(tooLarge(limit)) : drainThenReject(req, tooLarge(limit));
  // Only now is a sender waiting to be told to send its body told so.
  continueRequest(req, res);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) {
        cleanup();
        chunks.length = 0;
        drainThenReject(req, tooLarge(limit)).catch(reject);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      // A body of one read (nearly every webhook) is used as it came, without a copy.
      resolve(chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks, received));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(new AppError('BAD_REQUEST', 'request was aborted', { cause: error }));
    };
    const onClose = () => {
      if (!req.complete) onError(new Error('connection closed before the body was complete'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** Discards the rest of the body, then rejects with `error` (also if the client goes away). */
function drainThenReject(req: IncomingMessage, error: AppError): Promise<never> {
  return new Promise((_resolve, reject) => {
    if (req.complete) return reject(error);
    const settle = () => reject(error);
    req.once('end', settle);
    req.once('close', settle);
    req.once('error', settle);
    req.resume();
  });
}

function tooLarge(limit: number): AppError {
  return new AppError('PAYLOAD_TOO_LARGE', `request body is larger than ${limit} bytes`);
}
