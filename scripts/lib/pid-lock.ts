import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { runningPid } from './running-pid.ts';

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
    const holder = runningPid(path, command);
    if (holder !== undefined) throw held(holder);
    if (attempt === 2) throw new Error(`${path}: cannot take the lock; is another process taking it?`);
    rmSync(path, { force: true });
  }
}
