import { closeSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { runningPid } from './running-pid.ts';

/**
 * How long an empty lock file counts as one another process is still writing its pid into: it
 * creates the file, then writes. Read in between, it looked like a dead holder's, and two runs
 * both took the lock. Older than this, its process died between the two steps.
 */
const BEING_WRITTEN_MS = 5_000;
const WAIT_MS = 50;

/** Whether `path` is an empty file made within BEING_WRITTEN_MS (false once it is gone). */
function beingWritten(path: string): boolean {
  try {
    return readFileSync(path, 'utf8') === '' && Date.now() - statSync(path).mtimeMs < BEING_WRITTEN_MS;
  } catch {
    return false;
  }
}

/** Blocks for `ms` (the lock is taken synchronously, before anything else runs). */
const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Takes the lock file `path` for this process (the file holds its pid), or throws `held(pid)` while
 * the process that holds it still runs as `command`; a lock whose process is gone (killed with
 * SIGKILL) is taken over. Returns what releases it.
 */
export function takePidLock(path: string, command: string, held: (pid: number) => Error): () => void {
  for (let attempt = 0; ; attempt += 1) {
    try {
      // `wx`: of two processes starting at once, one creates the file and the other sees it.
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    for (let waited = 0; waited < 10 && beingWritten(path); waited += 1) pause(WAIT_MS);
    const holder = runningPid(path, command);
    if (holder !== undefined) throw held(holder);
    if (attempt === 2 || beingWritten(path))
      throw new Error(`${path}: cannot take the lock; is another process taking it?`);
    rmSync(path, { force: true });
  }
}
