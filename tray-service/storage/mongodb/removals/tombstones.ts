import type { Db } from 'mongodb';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import type { Activity } from '../../../domain/activity.ts';
import { activityPost } from '../../../domain/activity-post.ts';
import { type Removal } from '../../../domain/removal.ts';
import { removalVoids, voidedByAny } from '../../../domain/removal-voids.ts';
import { insertCoalesced } from '../driver/coalesced-writes.ts';
import { TRAY_REMOVALS } from '../collections/collection-names.ts';
import type { TombstoneDoc } from '../collections/tray-removals-collection.ts';

/**
 * Keeps each removal as a tombstone for the records' retention, and past it while what it voids
 * could be taken again (purge-kept-tombstones.ts); a redelivered one inserts nothing.
 */
export async function storeTombstones(
  db: Db,
  removals: readonly Removal[],
  options: { now: number; retentionDays: number },
): Promise<void> {
  if (removals.length === 0) return;
  await insertCoalesced<TombstoneDoc>(
    db,
    TRAY_REMOVALS,
    removals.map((removal) => ({
      _id: JSON.stringify([removal.kind, removal.id]),
      kind: removal.kind,
      id: removal.id,
      postId: removal.postId,
      at: removal.at,
      ...(removal.communityId === undefined ? {} : { communityId: removal.communityId }),
      expiresAt: new Date(Math.max(removal.at, options.now) + options.retentionDays * DAY_MS),
    })),
  );
}

/** The posts the activities belong to (activity-post.ts), each once. */
export function postsOf(activities: readonly Activity[]): string[] {
  return [...new Set(activities.flatMap((activity) => activityPost(activity) ?? []))];
}

/**
 * The tombstones kept on these posts, in one query (`removal_post`): an equality for one post (the
 * common case, which FerretDB pushes down), an `$in` for more (a late join's backfill; FerretDB
 * filters it in Go, over a collection as small as the platform's deletions).
 */
export async function tombstonesOn(db: Db, postIds: readonly string[]): Promise<Removal[]> {
  const [only, ...more] = postIds;
  if (only === undefined) return [];
  return db
    .collection<TombstoneDoc>(TRAY_REMOVALS)
    .find(more.length === 0 ? { postId: only } : { postId: { $in: [only, ...more] } }, {
      projection: { _id: 0, expiresAt: 0 },
    })
    .toArray();
}

/**
 * The activities no kept removal voids: an action arriving after its removal (retries, the
 * spool, replay) is a no-op (docs/tray-rules.md#inbox). The rule is the domain's (removal.ts).
 */
export async function withoutVoided(db: Db, activities: readonly Activity[]): Promise<Activity[]> {
  const tombstones = await tombstonesOn(db, postsOf(activities));
  if (tombstones.length === 0) return [...activities];
  return activities.filter((activity) => !voidedByAny(tombstones, activity));
}

/**
 * The removals kept now that void one of the activities: asked again after a write, for a removal
 * stored while it ran (it may have missed the actions this write kept, and this write may have
 * counted them after the removal's recomputation), so the caller applies it once more.
 */
export async function removalsVoiding(db: Db, activities: readonly Activity[]): Promise<Removal[]> {
  const tombstones = await tombstonesOn(db, postsOf(activities));
  return tombstones.filter((removal) => activities.some((activity) => removalVoids(removal, activity)));
}
