import { EXPIRY_INDEX, type CollectionSpec } from './collection-spec.ts';
import { TRAY_WRITE_LOCKS } from './collection-names.ts';

/** One write lock (write-lock.ts), held while a writer of one user's mutes or block list reads and writes. */
export interface WriteLockDoc {
  /** muteLockId(userId), blockListLockId(netidUid): one per user and kind, so the insert that takes it is the lock. */
  _id: string;
  /** The holder's own token: only the holder releases it, only a taker of this same stale lock deletes it. */
  token: string;
  /** When the holder, had it died, loses it: another writer takes it over; TTL-deleted (or purged) then. */
  expiresAt: Date;
}

/** The write locks, each held for the instant of one write of a user's mutes or block list. */
export const trayWriteLocksCollection: CollectionSpec = {
  name: TRAY_WRITE_LOCKS,
  indexes: [EXPIRY_INDEX],
};
