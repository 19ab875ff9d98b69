import { randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import { backOff } from '../driver/back-off.ts';
import { isDuplicateKey } from '../driver/is-duplicate-key.ts';
import { TRAY_WRITE_LOCKS } from '../collections/collection-names.ts';
import type { WriteLockDoc } from '../collections/tray-write-locks-collection.ts';
import { StorageBusyError } from '../../storage-busy-error.ts';

/**
 * How long a holder keeps the lock before another writer may take it over: a holder that died
 * between taking and releasing it (its work is two or three commands) would otherwise block the
 * user's mutes or block list for good. Long beside a PUT even on a loaded host, like the claims'
 * takeover.
 */
export const WRITE_LOCK_TAKEOVER_MS = 10_000;

/**
 * A waiter gives up after this long with a StorageBusyError (503, which clients retry): past a
 * dead holder's takeover, so that case still gets through, and well inside the tray client's
 * default 30 s timeout, so the caller hears the 503 instead of timing out and not retrying.
 */
export const WRITE_LOCK_WAIT_MS = 15_000;

/** The lock of one user's mutes: a PUT's or DELETE's read of the spans and its write. */
export const muteLockId = (userId: string) => JSON.stringify(['mutes', userId]);

/** The lock of one owner's block list: a block's count of the entries and its insert. */
export const blockListLockId = (netidUid: string) => JSON.stringify(['block-list', netidUid]);

/**
 * Runs `work` holding the lock `lockId` (muteLockId, blockListLockId), so its reads and writes are
 * one step against every other holder of that lock, in any process: a limit counted and then
 * written is never passed by two writers at once. The lock is an insert with that `_id`, the one
 * write FerretDB 1.24 performs atomically (its updates, a conditional `$inc` or findOneAndUpdate
 * included, are not atomic under concurrency, so a counter document would let two writers through
 * at once); on MongoDB it costs two commands per write. A waiter retries with the write protocol's
 * back-off; a lock past its `expiresAt` (its holder died) is deleted and taken again.
 */
export async function withWriteLock<T>(
  db: Db,
  lockId: string,
  work: () => Promise<T>,
  waitMs = WRITE_LOCK_WAIT_MS,
): Promise<T> {
  const locks = db.collection<WriteLockDoc>(TRAY_WRITE_LOCKS);
  const _id = lockId;
  const token = randomUUID();
  const giveUpAt = Date.now() + waitMs;
  for (let round = 1; ; round += 1) {
    try {
      await locks.insertOne({ _id, token, expiresAt: new Date(Date.now() + WRITE_LOCK_TAKEOVER_MS) });
      break;
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
    }
    const held = await locks.findOne({ _id });
    // Deleted by its token: only this stale holding goes, never a lock taken since.
    if (held && held.expiresAt.getTime() <= Date.now()) await locks.deleteOne({ _id, token: held.token });
    else if (Date.now() > giveUpAt)
      throw new StorageBusyError(`write lock ${lockId}: still held after ${waitMs} ms`);
    else await backOff(round);
  }
  try {
    return await work();
  } finally {
    // A release that fails (the server gone) leaves the lock to be taken over once it expires;
    // the write's own outcome stands.
    await locks.deleteOne({ _id, token }).catch(() => undefined);
  }
}
