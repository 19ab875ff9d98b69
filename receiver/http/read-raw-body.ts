import type { IncomingMessage } from 'node:http';
import { AppError } from '../../shared/errors/app-error.ts';

/**
 * Reads the request body as the exact bytes sent (the signature covers them), stopping as soon as
 * more than `limit` bytes arrive, whether or not a Content-Length was given (chunked bodies have
 * none). A declared length above the limit is refused before anything is read. Compressed bodies
 * are refused: inflating them would need its own limit and nothing the platform sends is compressed.
 */
export function readRawBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding !== 'identity') {
    return Promise.reject(new AppError('UNSUPPORTED_MEDIA_TYPE', 'content encoding is not supported'));
  }
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(tooLarge(limit));
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
        // Stop reading: the rest is never buffered; the error handler closes the connection.
        req.pause();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, received));
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

function tooLarge(limit: number): AppError {
  return new AppError('PAYLOAD_TOO_LARGE', `request body is larger than ${limit} bytes`, {
    headers: { Connection: 'close' },
  });
}
