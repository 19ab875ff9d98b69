import { closeSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
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

/** The file that is the right to replace the dead holder of lock file `path` (takeOverRight). */
export const takeOverRightPath = (path: string) => `${path}.takeover`;

/**
 * The right to replace a dead holder's lock, made with `wx` like the lock: of two runs finding the
 * same dead holder, one takes it over. Without it each removed the lock and made its own, and the
 * later removal took the earlier run's fresh lock away. One older than BEING_WRITTEN_MS was left by
 * a run killed mid-takeover, and is removed. Returns its release, or undefined when another run
 * holds it.
 */
function takeOverRight(path: string): (() => void) | undefined {
  const right = takeOverRightPath(path);
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      closeSync(openSync(right, 'wx', 0o600));
      return () => rmSync(right, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const age = statSync(right, { throwIfNoEntry: false });
    if (age && Date.now() - age.mtimeMs < BEING_WRITTEN_MS) return undefined;
    rmSync(right, { force: true });
  }
  return undefined;
}

/** Lock files this process took and has not released (resolved paths). */
const takenHere = new Set<string>();

/**
 * The process holding `path` besides this one: its pid while it runs as `command`. A file naming
 * this process's pid that this process did not take is a killed run's whose pid came round again
 * (a container numbers its processes from 1 at every start): no holder. (A lock is only as good
 * as the pids it compares: processes in other pid namespaces, such as another container on a
 * shared volume, cannot see each other's, whatever their numbers.) The file holds the pid alone,
 * as `kill $(cat stack.pid)` reads it.
 */
function otherHolder(path: string, command: string): number | undefined {
  const pid = runningPid(path, command);
  return pid === process.pid && !takenHere.has(resolve(path)) ? undefined : pid;
}

/** Blocks for `ms` (the lock is taken synchronously, before anything else runs). */
const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** Makes the lock file holding this process's pid; false when it exists. */
function createLock(path: string): boolean {
  let fd: number;
  try {
    // `wx`: of two processes starting at once, one creates the file and the other sees it.
    fd = openSync(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  writeSync(fd, `${process.pid}\n`);
  closeSync(fd);
  return true;
}

/**
 * Takes the lock file `path` for this process (the file holds its pid), or throws `held(pid)` while
 * the process that holds it still runs as `command`; a lock whose process is gone (killed with
 * SIGKILL) is taken over. Returns what releases it.
 */
export function takePidLock(path: string, command: string, held: (pid: number) => Error): () => void {
  const key = resolve(path);
  const taken = () => {
    takenHere.add(key);
    return () => {
      takenHere.delete(key);
      rmSync(path, { force: true });
    };
  };
  for (let attempt = 0; attempt < 3; attempt += 1) {
    if (createLock(path)) return taken();
    for (let waited = 0; waited < 10 && beingWritten(path); waited += 1) pause(WAIT_MS);
    const holder = otherHolder(path, command);
    if (holder !== undefined) throw held(holder);
    const right = beingWritten(path) ? undefined : takeOverRight(path);
    if (!right) break;
    try {
      // Read again under the right: another run may have taken the lock over meanwhile.
      const holderNow = otherHolder(path, command);
      if (holderNow !== undefined) throw held(holderNow);
      if (beingWritten(path)) break;
      rmSync(path, { force: true });
      if (createLock(path)) return taken();
    } finally {
      right();
    }
  }
  throw new Error(`${path}: cannot take the lock; is another process taking it?`);
}
