import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { runningPid } from './running-pid.ts';

/** The running stack's pid, in its data directory. */
export const stackLockPath = (dataDir: string) => join(dataDir, 'stack.pid');

/**
 * One stack per data directory: a second one's Redis would write the first one's append-only file,
 * and its PostgreSQL could not start. Takes the lock (the file holds this process's pid), or throws
 * one line naming the stack that holds it; a lock whose stack is gone (killed with SIGKILL) is taken
 * over. Returns what releases it.
 */
export function lockDataDir(dataDir: string): () => void {
  const path = stackLockPath(dataDir);
  for (let attempt = 0; ; attempt += 1) {
    try {
      // `wx`: of two stacks starting at once, one creates the file and the other sees it.
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = runningPid(path, 'dev-stack-run');
    if (holder !== undefined) {
      throw new Error(
        `${dataDir} is in use by another npm start (pid ${holder}): stop that one first, or set STACK_DATA_DIR to another directory`,
      );
    }
    if (attempt === 2) throw new Error(`${path}: cannot take the lock; is another npm start starting?`);
    rmSync(path, { force: true });
  }
}
