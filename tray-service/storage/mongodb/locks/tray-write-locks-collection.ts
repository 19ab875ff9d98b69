import { EXPIRY_INDEX, type CollectionSpec } from '../setup/collection-spec.ts';
import { TRAY_MUTE_LOCKS } from '../collection-names.ts';

/** One user's mute lock (mute-lock.ts), held while a PUT or DELETE of the user's mutes reads and writes. */
export interface MuteLockDoc {
  /** muteLockId(userId): one per user, so the insert that takes it is the lock. */
  _id: string;
  /** The holder's own token: only the holder releases it, only a taker of this same stale lock deletes it. */
  token: string;
  /** When the holder, had it died, loses it: another PUT takes it over; TTL-deleted (or purged) then. */
  expiresAt: Date;
}

/** tray_mute_locks: the users' mute locks, each held for the instant of one PUT or DELETE. */
export const trayMuteLocksCollection: CollectionSpec = {
  name: TRAY_MUTE_LOCKS,
  indexes: [EXPIRY_INDEX],
};
