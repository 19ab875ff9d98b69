import type { GroupCount } from './create-counter.ts';

/**
 * How a history page reads a user's records: the user's buckets (shared/tray/storage-keys.ts)
 * with their record counts and newest lastUpdate, newest first, come from one indexed count; the
 * walk reads whole buckets in that order, a round of them at a time, until the page is settled.
 * Ordering by each bucket's newest record, not by its number, keeps the walk right whatever the
 * buckets' widths (hours, and days written before them). Pure.
 */

/**
 * The end (exclusive) of the next round of buckets to read from `start`: enough that their counts
 * bring the rows read (`have`) up to `want`, at least one, at most `max` at once.
 */
export function nextRound(
  buckets: readonly GroupCount[],
  start: number,
  have: number,
  want: number,
  max: number,
): number {
  let end = start;
  let counted = have;
  for (const bucket of buckets.slice(start, start + max)) {
    if (end > start && counted >= want) break;
    counted += bucket.count;
    end += 1;
  }
  return end;
}

/**
 * The lastUpdate above which the rows read are complete once the buckets before `next` are read:
 * every unread bucket's records are at most its newest. -Infinity when every bucket is read.
 */
export function completeAbove(buckets: readonly GroupCount[], next: number): number {
  return Math.max(-Infinity, ...buckets.slice(next).map((bucket) => bucket.newest));
}
