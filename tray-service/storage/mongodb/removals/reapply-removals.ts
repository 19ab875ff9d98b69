import type { Db } from 'mongodb';
import { recordKey, type Activity } from '../../../domain/activity.ts';
import type { Removal } from '../../../domain/removal.ts';
import type { GroupingOptions } from '../grouping/write-deliveries.ts';
import { recomputeOptionsOf } from '../grouping/recompute-member-records.ts';
import { removalVoids } from '../../../domain/removal-voids.ts';
import { recordGroup } from '../records/storage-keys.ts';
import { applyRemovals, recomputeRacedGroups } from './apply-removals.ts';
import { removalReaches, tombstoneKey, tombstonesMet } from './tombstones.ts';

/**
 * The keys of the records a voided activity may be counted in, to be computed again without it;
 * 'whole': every record of its group.
 */
export type RecordsOf = (activity: Activity) => ReadonlySet<string> | 'whole';

/**
 * The records a write of the activity could have made or changed: its recipient's for one
 * addressed to a user (a comment, a late join's backfill), every member's for a community's post.
 */
const recordsByAudience: RecordsOf = ({ verb, targetId, audience }) =>
  audience.kind === 'user' ? new Set([recordKey(verb, targetId, audience.userId)]) : 'whole';

/**
 * After a write of `activities`, the removals it may have raced (docs/storage.md#removals):
 * - one that voids an action of this write, applied once more now that the write is done: stored
 *   while it ran (after its tombstone check), it may have read the kept actions before this write
 *   kept them, or computed the records before this write counted them; the groups of the voided
 *   actions are computed again without them.
 * - any stored while it ran or still running at its check (not in `seen`: the applied removals its
 *   check met), voiding some of its actions or none, on a post or community whose records it
 *   wrote: this write may have read the group's actors before the removal took its action out,
 *   and the removal computed the group's records before this write made or moved one (a cleared
 *   tray's new record, one now counting from an earlier action). Those groups are computed again
 *   from the kept actions (recomputeRacedGroups); the removal's own steps are its own job's.
 * One tombstone read when there is none, the common case (two for a community's posts).
 */
export async function reapplyRemovals(
  db: Db,
  activities: readonly Activity[],
  options: GroupingOptions,
  seen?: ReadonlySet<string>,
  recordsOf: RecordsOf = recordsByAudience,
): Promise<void> {
  if (activities.length === 0) return;
  const voiding: Removal[] = [];
  const raced: Removal[] = [];
  // The removal may have taken these actions out before this write kept them in its records, so
  // their groups are not found through the kept actions any more: they are named here.
  const counted = new Map<string, Set<string>>();
  // The records each such group's voided actions may be counted in (recordsOf).
  const written = new Map<string, Set<string> | 'whole'>();
  const racedGroups = new Set<string>();
  for (const removal of await tombstonesMet(db, activities)) {
    const voids = activities.filter((activity) => removalVoids(removal, activity));
    for (const activity of voids) {
      // Named whatever records it may be counted in: the group's actors are repaired (an entry a
      // failed try put in after the removal ran goes), and only those records computed again.
      const group = recordGroup(activity.verb, activity.targetId);
      counted.set(group, (counted.get(group) ?? new Set()).add(activity.lastActionId));
      const records = recordsOf(activity);
      const keys = written.get(group);
      if (records === 'whole') written.set(group, 'whole');
      else if (keys !== 'whole') written.set(group, new Set([...(keys ?? []), ...records]));
    }
    if (voids.length > 0) voiding.push(removal);
    // Whether or not it voids one of them: applied again, it computes only the groups of what it
    // voids (and of work it has not finished), not the others of this write it reaches.
    if (seen !== undefined && !seen.has(tombstoneKey(removal))) {
      raced.push(removal);
      for (const activity of activities)
        if (removalReaches(removal, activity)) racedGroups.add(recordGroup(activity.verb, activity.targetId));
    }
  }
  const recompute = { ...recomputeOptionsOf(options), keptSince: options.keptSince ?? 0 };
  const countedRecords = new Map(
    [...written].flatMap(([group, keys]) => (keys === 'whole' ? [] : [[group, keys] as const])),
  );
  if (voiding.length > 0) await applyRemovals(db, voiding, { ...recompute, counted, countedRecords });
  if (racedGroups.size > 0) await recomputeRacedGroups(db, raced, racedGroups, recompute);
}
