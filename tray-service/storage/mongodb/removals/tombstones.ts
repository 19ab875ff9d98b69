import type { Db } from 'mongodb';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import type { Activity } from '../../../domain/activity.ts';
import { activityPost } from '../../../domain/activity-post.ts';
import { type Removal } from '../../../domain/removal.ts';
import { voidedByAny } from '../../../domain/removal-voids.ts';
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
      applying: true,
      expiresAt: new Date(Math.max(removal.at, options.now) + options.retentionDays * DAY_MS),
    })),
  );
}

/**
 * Marks the removals applied (their tombstones' `applying` unset), once every record they change
 * was computed again: a write meeting them from then on reads the actors and kept actions they
 * left. Single-document updates in one unordered bulk, as FerretDB pushes each `{_id}` down; with
 * the post, the collection's shard key (docs/scaling.md), each goes to one shard.
 */
export async function markApplied(db: Db, removals: readonly Removal[]): Promise<void> {
  if (removals.length === 0) return;
  await db.collection<TombstoneDoc>(TRAY_REMOVALS).bulkWrite(
    removals.map((removal) => ({
      updateMany: {
        filter: { _id: tombstoneKey(removal), postId: removal.postId, applying: true },
        update: { $unset: { applying: '' } },
      },
    })),
    { ordered: false },
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
export async function tombstonesOn(db: Db, postIds: readonly string[]): Promise<Tombstone[]> {
  const [only, ...more] = postIds;
  if (only === undefined) return [];
  return db
    .collection<TombstoneDoc>(TRAY_REMOVALS)
    .find(more.length === 0 ? { postId: only } : { postId: { $in: [only, ...more] } }, {
      projection: { _id: 0, expiresAt: 0 },
    })
    .toArray();
}

/** A kept removal as read: `applying` while it runs (TombstoneDoc). */
export type Tombstone = Removal & Pick<TombstoneDoc, 'applying'>;

/** A tombstone's key, its `_id`: the removal's kind and id. Pure. */
export const tombstoneKey = (removal: Pick<Removal, 'kind' | 'id'>): string =>
  JSON.stringify([removal.kind, removal.id]);

/** The communities whose `post` records the activities write (a community post's record group). */
export function postCommunitiesOf(activities: readonly Activity[]): string[] {
  return [
    ...new Set(
      activities.flatMap((activity) =>
        activity.verb === 'post' && activity.audience.kind === 'community'
          ? [activity.audience.communityId]
          : [],
      ),
    ),
  ];
}

/**
 * Whether a removal may change the record group of `activity`: one on its post, or a post removed
 * from the community whose `post` records it writes (they count the community's other posts). Pure.
 */
export function removalReaches(removal: Removal, activity: Activity): boolean {
  if (activityPost(activity) === removal.postId) return true;
  return (
    activity.verb === 'post' &&
    activity.audience.kind === 'community' &&
    removal.communityId === activity.audience.communityId
  );
}

/**
 * The tombstones a write of these activities meets: those on their posts (tombstonesOn) and, for
 * community posts, those of posts removed from their communities (`removal_community`).
 */
export async function tombstonesMet(db: Db, activities: readonly Activity[]): Promise<Tombstone[]> {
  const met = await tombstonesOn(db, postsOf(activities));
  const communities = postCommunitiesOf(activities);
  if (communities.length === 0) return met;
  const seen = new Set(met.map(tombstoneKey));
  const inCommunities = await db
    .collection<TombstoneDoc>(TRAY_REMOVALS)
    .find(
      communities.length === 1 ? { communityId: communities[0] } : { communityId: { $in: communities } },
      { projection: { _id: 0, expiresAt: 0 } },
    )
    .toArray();
  return [...met, ...inCommunities.filter((removal) => !seen.has(tombstoneKey(removal)))];
}

/**
 * The activities no kept removal voids: an action arriving after its removal (retries, the
 * spool, replay) is a no-op (docs/tray-rules.md#inbox). The rule is the domain's (removal.ts).
 * And the tombstones met of removals already applied, by key: a removal stored after this read
 * (while the write runs) or still running at it is applied again after the write
 * (reapply-removals.ts).
 */
export async function withoutVoided(
  db: Db,
  activities: readonly Activity[],
): Promise<{ live: Activity[]; seen: ReadonlySet<string> }> {
  const tombstones = await tombstonesMet(db, activities);
  return {
    live:
      tombstones.length === 0
        ? [...activities]
        : activities.filter((activity) => !voidedByAny(tombstones, activity)),
    seen: new Set(tombstones.filter((removal) => removal.applying !== true).map(tombstoneKey)),
  };
}
