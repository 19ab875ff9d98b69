import { join } from 'node:path';
import { takePidLock } from './pid-lock.ts';

/** The running stack's pid, in its data directory. */
export const stackLockPath = (dataDir: string) => join(dataDir, 'stack.pid');

/**
 * One stack per data directory: a second one's Redis would write the first one's append-only file,
 * and its PostgreSQL could not start. Takes the lock (the file holds this process's pid), or throws
 * one line naming the stack that holds it; a lock whose stack is gone (killed with SIGKILL) is taken
 * over. Returns what releases it.
 */
export function lockDataDir(dataDir: string): () => void {
  return takePidLock(
    stackLockPath(dataDir),
    'dev-stack-run',
    (holder) =>
      new Error(
        `${dataDir} is in use by another npm start (pid ${holder}): stop that one first, or set STACK_DATA_DIR to another directory`,
      ),
  );
}
