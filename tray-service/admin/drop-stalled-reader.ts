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
  res.on('drain', () => {
    waitingSince = undefined;
  });
  // Checked four times per idleMs: cut off between idleMs and 1.25 idleMs into the wait.
  const check = setInterval(
    () => {
      const waiting = res.writableNeedDrain || (res.writableEnded && !res.writableFinished);
      const length = res.writableLength;
      const taken = length < left;
      left = length;
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
