import type { Db } from 'mongodb';
import type { Activity } from '../../../domain/activity.ts';
import { TRAY_TARGET_ACTIONS } from '../collections/collection-names.ts';
import { targetActionId } from '../grouping/target-actions.ts';
import type { TargetActionDoc } from '../collections/tray-target-actions-collection.ts';
import type { GroupingOptions } from '../grouping/write-deliveries.ts';
import { reapplyRemovals } from './reapply-removals.ts';

/**
 * A write's activities that a kept removal voids (`all` without `live`) are a no-op, unless an
 * earlier try of the same write kept them already: that try passed its tombstone check before the
 * removal was stored, kept (and maybe counted) the actions, and failed before its reapplyRemovals
 * (nothing here is one transaction). The removal, which found nothing to void then, is applied
 * again to those now, so the retry finishes what the try left. One read by `_id`, and only when
 * something was voided.
 */
export async function reapplyToKeptVoided(
  db: Db,
  all: readonly Activity[],
  live: readonly Activity[],
  options: GroupingOptions,
): Promise<void> {
  const voided = all.filter((activity) => !live.includes(activity));
  if (voided.length === 0) return;
  const kept = await db
    .collection<TargetActionDoc>(TRAY_TARGET_ACTIONS)
    .find({ _id: { $in: voided.map(targetActionId) } }, { projection: { _id: 1 } })
    .toArray();
  const found = new Set(kept.map((doc) => doc._id));
  await reapplyRemovals(
    db,
    voided.filter((activity) => found.has(targetActionId(activity))),
    options,
  );
}
