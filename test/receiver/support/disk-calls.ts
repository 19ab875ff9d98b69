import { rmSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

/** A FileHandle method the spool writes through. */
export type DiskMethod = 'appendFile' | 'sync';
type DiskCall = (this: FileHandle, data: Buffer) => Promise<void>;

/**
 * Replaces `method` on every FileHandle (the spool opens its own, so the prototype is what a test
 * can reach) with `replace`, which gets the real call; the returned function puts it back. The
 * calls still reach the disk: `replace` decides when, or fails them as a disk does.
 */
async function replaceDiskCall(
  dir: string,
  method: DiskMethod,
  replace: (real: DiskCall) => DiskCall,
): Promise<() => void> {
  const sample = await open(join(dir, 'sample'), 'w');
  await sample.close();
  rmSync(join(dir, 'sample'));
  const prototype = Object.getPrototypeOf(sample) as Record<DiskMethod, DiskCall>;
  const real = prototype[method];
  prototype[method] = replace(real);
  return () => {
    prototype[method] = real;
  };
}

/** Makes the next call of `method`, on any handle, do `fail` instead (write part of it, throw). */
export function failNextDiskCall(
  dir: string,
  method: DiskMethod,
  fail: (handle: FileHandle, data: Buffer) => Promise<void>,
): Promise<() => void> {
  let armed = true;
  return replaceDiskCall(
    dir,
    method,
    (real) =>
      function (data) {
        if (!armed) return real.call(this, data);
        armed = false;
        return fail(this, data);
      },
  );
}

/**
 * Makes every call of `method` wait, as on a disk that stalls, until `answer()`; each then makes
 * its real call. `restore()` puts the method back (calls already waiting still wait for answer).
 */
export async function stallDiskCalls(
  dir: string,
  method: DiskMethod,
): Promise<{ answer: () => void; restore: () => void; waiting: () => number }> {
  const { promise: answered, resolve: answer } = Promise.withResolvers<undefined>();
  let waiting = 0;
  const restore = await replaceDiskCall(
    dir,
    method,
    (real) =>
      async function (data) {
        waiting += 1;
        await answered;
        waiting -= 1;
        return real.call(this, data);
      },
  );
  return { answer: () => answer(undefined), restore, waiting: () => waiting };
}

/** Counts the calls of `method` on every FileHandle (they still reach the disk) until `restore()`. */
export async function countDiskCalls(
  dir: string,
  method: DiskMethod,
): Promise<{ count: () => number; restore: () => void }> {
  let calls = 0;
  const restore = await replaceDiskCall(
    dir,
    method,
    (real) =>
      function (data) {
        calls += 1;
        return real.call(this, data);
      },
  );
  return { count: () => calls, restore };
}
