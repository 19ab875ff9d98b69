import type { ServerResponse } from 'node:http';
import { finished } from 'node:stream';

/**
 * Destroys `res` once writes have waited `idleMs` for its reader without it taking any of them: a
 * paused download or a sleeping laptop would otherwise hold what the response holds (an export's
 * slot, a storage cursor) for as long as its connection stays up. Waiting counts while writes wait
 * for a 'drain', and after the end while bytes are left to send (an ended response is never
 * waiting for a drain, and its 'finish', which gives an export's slot back, comes only once its
 * reader took the rest). Only time spent waiting on the reader counts: a response whose source is
 * slow to produce is left alone, and any bytes taken start the wait again. `onDropped` is told
 * before the response is destroyed.
 */
export function dropStalledReader(res: ServerResponse, idleMs: number, onDropped: () => void): void {
  let waitingSince: number | undefined;
  let left = res.writableLength;
  let unsent = unsentBytes(res);
  res.on('drain', () => {
    waitingSince = undefined;
  });
  // Checked four times per idleMs: cut off between idleMs and 1.25 idleMs into the wait.
  const check = setInterval(
    () => {
      const waiting = res.writableNeedDrain || (res.writableEnded && !res.writableFinished);
      const length = res.writableLength;
      const queued = unsentBytes(res);
      const taken = length < left || queued < unsent;
      left = length;
      unsent = queued;
      if (!waiting || taken) {
        waitingSince = undefined;
        return;
      }
      const now = Date.now();
      waitingSince ??= now;
      if (now - waitingSince < idleMs) return;
      clearInterval(check);
      onDropped();
      res.destroy();
    },
    Math.max(1, Math.floor(idleMs / 4)),
  );
  check.unref();
  finished(res, () => clearInterval(check));
}

/**
 * Bytes the socket's write in progress has yet to hand to the kernel. A write's length leaves
 * `writableLength` only once all of it is sent, so one chunk larger than the socket buffers (an
 * export's row of a large event) shows no progress there while its reader takes it steadily; the
 * handle's queue does (Node's own socket timeout reads the same field to see a write moving).
 */
function unsentBytes(res: ServerResponse): number {
  const handle = (res.socket as { _handle?: { writeQueueSize?: unknown } } | null)?._handle;
  return typeof handle?.writeQueueSize === 'number' ? handle.writeQueueSize : 0;
}
