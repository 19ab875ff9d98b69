import type { Db } from 'mongodb';
import type { Activity } from '../../../domain/activity.ts';
import type { GroupingOptions } from '../grouping/write-deliveries.ts';
import { voidedByAny } from '../../../domain/removal-voids.ts';
import { recordGroup } from '../records/storage-keys.ts';
import { applyRemovals } from './apply-removals.ts';
import { removalsVoiding } from './tombstones.ts';

/**
 * After a write of `activities`: a removal of one of them stored while the write ran (after its
 * tombstone check) may have read the kept actions before this write kept them, or computed the
 * records before this write counted them; it is applied once more, now that the write is done,
 * so the voided actions leave whatever this write did (docs/storage.md#removals): the groups of
 * this write's voided actions are computed again with those the kept actions lead to. One
 * tombstone read when there is none, the common case.
 */
export async function reapplyRemovals(
  db: Db,
  activities: readonly Activity[],
  options: GroupingOptions,
): Promise<void> {
  if (activities.length === 0) return;
  const met = await removalsVoiding(db, activities);
  if (met.length === 0) return;
  // The removal may have taken these actions out before this write kept them in its records, so
  // their groups are not found through the kept actions any more: they are named here.
  const counted = new Map<string, Set<string>>();
  for (const activity of activities) {
    if (!voidedByAny(met, activity)) continue;
    const group = recordGroup(activity.verb, activity.targetId);
    counted.set(group, (counted.get(group) ?? new Set()).add(activity.lastActionId));
  }
  await applyRemovals(db, met, {
    counted,
    retentionDays: options.retentionDays,
    owner: options.owner,
    now: options.now ?? Date.now,
    keptSince: options.keptSince ?? 0,
    ...(options.onWritten ? { onWritten: options.onWritten } : {}),
    ...(options.onRemoved ? { onRemoved: options.onRemoved } : {}),
  });
}
