import type { Db } from 'mongodb';
import type { Activity } from '../../../domain/activity.ts';
import type { GroupingOptions } from '../grouping/write-deliveries.ts';
import { reapplyRemovals } from './reapply-removals.ts';

/**
 * A write's activities that a kept removal voids (`all` without `live`) are a no-op, unless an
 * earlier try of the same write kept them (nothing here is one transaction): that try passed its
 * tombstone check before the removal was stored, kept the actions and maybe counted them, and
 * failed before its reapplyRemovals. The removal then either found nothing to void, or ran whole
 * between the try's keep and its record writes, taking the kept actions out and computing the
 * records before the try's landed. The retry cannot tell those from a write that never raced (its
 * actions are no longer kept either way), so the removal is applied again to what every voided
 * activity could have written (reapplyRemovals): the records of its recipients for one addressed
 * to users (a comment, a late join's backfill of a removed post), the group whole for a
 * community's post. The retry finishes what the try left. Only when something was voided, which is
 * rare on a first try (an action delivered after its removal): a retry, a redelivery, a replay or
 * a late join's backfill of an event whose target was removed since.
 */
export async function reapplyToVoided(
  db: Db,
  all: readonly Activity[],
  live: readonly Activity[],
  options: GroupingOptions,
): Promise<void> {
  const voided = all.filter((activity) => !live.includes(activity));
  if (voided.length > 0) await reapplyRemovals(db, voided, options);
}
