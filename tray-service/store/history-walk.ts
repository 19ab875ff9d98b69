import { DAY_MS } from '../../shared/time/durations.ts';
import { bucketOf } from '../../shared/tray/storage-keys.ts';

/**
 * The history buckets a page may read, newest first: from the bucket of the page's upper bound
 * (or of now, for the first page) down to the oldest one that can still hold an unexpired record.
 * Records are stored in the bucket of their lastUpdate, clamped to the write time, so no record
 * sits in a bucket after the current one. Pure.
 */
export function historyBuckets(upper: number | undefined, now: number, retentionDays: number): number[] {
  const newest = bucketOf(Math.min(upper ?? now, now));
  const oldest = bucketOf(now - retentionDays * DAY_MS);
  const buckets: number[] = [];
  for (let bucket = newest; bucket >= oldest; bucket--) buckets.push(bucket);
  return buckets;
}
