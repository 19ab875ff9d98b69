/**
 * The equality keys the tray's storage queries by. FerretDB on PostgreSQL serves only top-level
 * equality from an index (docs/storage.md), so every hot query selects by one of these fields
 * instead of by a range, `$in` or a dotted path. Pure: the stores write and query them.
 */
import { HOUR_MS } from '../time/durations.ts';

/**
 * Width of a history bucket: a page reads whole buckets of a user's records, so a user with a
 * thousand records in a day reads a few dozen per page, not the day. Records written before the
 * width was an hour keep their one-day buckets: the history walk orders buckets by the newest
 * record in each, whatever their width, so they need no migration.
 */
export const HISTORY_BUCKET_MS = HOUR_MS;

/** Every recipient's record of one verb and target: what a fan-out reads and a post regroups. */
export function recordGroup(verb: string, targetId: string): string {
  // JSON keeps the parts apart whatever characters the ids contain.
  return JSON.stringify([verb, targetId]);
}

/** The hour of `at` (epoch ms) as a bucket number. */
export function bucketOf(at: number): number {
  return Math.floor(at / HISTORY_BUCKET_MS);
}

/** One user's records whose lastUpdate falls in one bucket. */
export function historyBucket(userId: string, bucket: number): string {
  return JSON.stringify([userId, bucket]);
}

/** The UTC day (YYYY-MM-DD) of a time: expiring documents are purged a whole day at a time. */
export function dayOf(at: Date | number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** The equality keys of a tray record, derived from its fields (`now`: the write time on the tray's clock). */
export function recordStorageKeys(
  record: { userId: string; verb: string; targetId: string; lastUpdate: number; expiresAt: Date },
  now: number,
): { group: string; bucket: string; expiresDay: string } {
  return {
    group: recordGroup(record.verb, record.targetId),
    // Clamped to now: a lastUpdate ahead of the tray's clock still lands where pages look.
    bucket: historyBucket(record.userId, bucketOf(Math.min(record.lastUpdate, now))),
    expiresDay: dayOf(record.expiresAt),
  };
}
