import type { ServerResponse } from 'node:http';
import { finished } from 'node:stream';

/**
 * Destroys `res` once writes have waited `idleMs` for its reader without it taking them (no
 * 'drain'): a paused download or a sleeping laptop would otherwise hold what the response holds
 * (an export's slot, a storage cursor) for as long as its connection stays up. Only time spent
 * waiting on the reader counts: a response whose source is slow to produce is left alone.
 * `onDropped` is told before the response is destroyed.
 */
export function dropStalledReader(res: ServerResponse, idleMs: number, onDropped: () => void): void {
  let waitingSince: number | undefined;
  res.on('drain', () => {
    waitingSince = undefined;
  });
  // Checked four times per idleMs: cut off between idleMs and 1.25 idleMs into the wait.
  const check = setInterval(
    () => {
      if (!res.writableNeedDrain) {
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
