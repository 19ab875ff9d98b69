import type { Db } from 'mongodb';
import type { Activity } from '../../../domain/activity.ts';
import type { Removal } from '../../../domain/removal.ts';
import type { GroupingOptions } from '../grouping/write-deliveries.ts';
import { removalVoids } from '../../../domain/removal-voids.ts';
import { recordGroup } from '../records/storage-keys.ts';
import { applyRemovals } from './apply-removals.ts';
import { removalReaches, tombstoneKey, tombstonesMet } from './tombstones.ts';

/**
 * After a write of `activities`, the removals it may have raced, applied once more now that the
 * write is done (docs/storage.md#removals). Two kinds:
 * - one that voids an action of this write: stored while it ran (after its tombstone check), it
 *   may have read the kept actions before this write kept them, or computed the records before
 *   this write counted them; the groups of the voided actions are computed again without them.
 * - one stored while it ran, or still running at its check (not in `seen`: the applied removals
 *   its check met), on a post or community
 *   whose records it wrote: this write may have read the group's actors before the removal took
 *   its actions out, and the removal computed the group's records before this write made or moved
 *   one (a cleared tray's new record, one now counting from an earlier action): those groups are
 *   computed again from the kept actions left.
 * One tombstone read when there is none, the common case (two for a community's posts).
 */
export async function reapplyRemovals(
  db: Db,
  activities: readonly Activity[],
  options: GroupingOptions,
  seen?: ReadonlySet<string>,
): Promise<void> {
  if (activities.length === 0) return;
  const met: Removal[] = [];
  // The removal may have taken these actions out before this write kept them in its records, so
  // their groups are not found through the kept actions any more: they are named here.
  const counted = new Map<string, Set<string>>();
  const count = (activity: Activity, ids: readonly string[]) => {
    const group = recordGroup(activity.verb, activity.targetId);
    counted.set(group, new Set([...(counted.get(group) ?? []), ...ids]));
  };
  for (const removal of await tombstonesMet(db, activities)) {
    const voids = activities.filter((activity) => removalVoids(removal, activity));
    const raced = seen !== undefined && !seen.has(tombstoneKey(removal));
    if (voids.length === 0 && !raced) continue;
    met.push(removal);
    for (const activity of voids) count(activity, [activity.lastActionId]);
    if (raced) for (const activity of activities) if (removalReaches(removal, activity)) count(activity, []);
  }
  if (met.length === 0) return;
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
