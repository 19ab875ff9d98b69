import type { Db } from 'mongodb';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { recordGroup } from '../records/storage-keys.ts';
import type { Activity, ActorInfo } from '../../../domain/activity.ts';
import { activityPost } from '../../../domain/activity-post.ts';
import { insertCoalesced } from '../driver/coalesced-writes.ts';
import { WHOLE_GROUP } from '../driver/whole-group.ts';
import { TRAY_TARGET_ACTIONS } from '../collections/collection-names.ts';
import type { TargetActionDoc } from '../collections/tray-target-actions-collection.ts';
import { withoutPlace, type KeptActivity } from '../../../domain/kept-activity.ts';
import { nextProcessed, storedPlaces } from '../memberships/processing-order.ts';

/** The member key of an action addressed to `userId` on `communityId`'s targets. */
export const memberKey = (communityId: string, userId: string) => JSON.stringify([communityId, userId]);

/** The community of an action's target, or undefined on a user feed. */
export function communityOf(activity: Activity): string | undefined {
  return activity.audience.kind === 'community' ? activity.audience.communityId : activity.communityId;
}

/** A community post is kept once for the community, also when a late join brings it to one member. */
const keptRecipient = (activity: Activity) =>
  activity.audience.kind === 'user' && activity.verb !== 'post' ? activity.audience.userId : '';

/** The `_id` an activity's action is kept under (TargetActionDoc). Pure. */
export const targetActionId = (activity: Activity): string =>
  JSON.stringify([
    recordGroup(activity.verb, activity.targetId),
    activity.lastActionId,
    keptRecipient(activity),
  ]);

/**
 * Keeps every action a record may count, on user feeds as on a community's targets, for the
 * records' retention: a record is computed again from them exactly (a removal, a recipient away or
 * muted at times; docs/storage.md#records-stay-small). A recipient's own action reaches no one, yet it
 * is kept too, without a member key: no record counts it, but its removal must find its group, whose
 * records are then computed again as the reference tray's are (a mute dated before an action a
 * record counts takes that action out there; docs/tray-rules.md#inbox). Each takes a place in the
 * processing order when first kept (docs/tray-rules.md#leaving-and-rejoining-a-community); returns
 * the activities with the place each has (a redelivered one its first), in their order.
 */
export async function keepTargetActions(
  db: Db,
  given: readonly Activity[],
  retentionDays: number,
): Promise<KeptActivity[]> {
  const activities = given.map(withoutPlace);
  if (activities.length === 0) return [];
  // Only actions on a community's targets are judged by the processing order (a user feed's by
  // no membership): those of user feeds alone take no place, and cost no allocation.
  const first = activities.some((activity) => communityOf(activity) !== undefined)
    ? await nextProcessed(db, activities.length)
    : undefined;
  const docs: TargetActionDoc[] = activities.flatMap((activity, index) => {
    const communityId = communityOf(activity);
    const recipient = keptRecipient(activity);
    const own = recipient === activity.actor.userId;
    const group = recordGroup(activity.verb, activity.targetId);
    const expiresAt = new Date(activity.at + retentionDays * DAY_MS);
    const postId = activityPost(activity);
    return [
      {
        _id: targetActionId(activity),
        group,
        ...(postId === undefined ? {} : { postId }),
        // Only a community's members join and leave: a user feed's actions need no member key.
        ...(recipient === '' || own || communityId === undefined
          ? {}
          : { member: memberKey(communityId, recipient) }),
        at: activity.at,
        // Kept as the community's whoever keeps it first: a late join keeps it addressed to the
        // joiner, and a post kept that way would count for the joiner alone.
        activity:
          recipient === '' && communityId !== undefined
            ? { ...activity, audience: { kind: 'community' as const, communityId } }
            : activity,
        expiresAt,
        ...(first === undefined ? {} : { processed: first + index }),
      },
    ];
  });
  // Once per `_id`: a late join of thousands brings each post to every joiner, the same kept
  // action each time, and FerretDB pays for every duplicate key an insert meets.
  // The first of each, as an unordered insert of them all would keep.
  const unique = new Map<string, TargetActionDoc>();
  for (const doc of docs) if (!unique.has(doc._id)) unique.set(doc._id, doc);
  const inserted = [...unique.values()];
  const duplicates =
    inserted.length > 0 ? await insertCoalesced<TargetActionDoc>(db, TRAY_TARGET_ACTIONS, inserted) : [];
  // A redelivered action keeps the place it took first: read back for the duplicates the insert
  // reported.
  const places = new Map(inserted.map((doc) => [doc._id, doc.processed]));
  if (first !== undefined) {
    const ids = duplicates.map((index) => (inserted[index] as TargetActionDoc)._id);
    const stored = await storedPlaces(db, TRAY_TARGET_ACTIONS, ids);
    for (const [id, place] of stored) places.set(id, place ?? KEPT_BEFORE_ORDER);
  }
  return activities.map((activity, index) => {
    const place = places.get((docs[index] as TargetActionDoc)._id);
    return place === undefined ? activity : { ...activity, processed: place };
  });
}

/** The place of an action kept before the processing order existed: after every change then (0). */
const KEPT_BEFORE_ORDER = 1;

/**
 * The activities with the places their actions took when first kept (by `_id`, one read each: an
 * event's few); one no longer kept has none, as processed now, after every change.
 */
export async function keptPlaces(db: Db, activities: readonly Activity[]): Promise<KeptActivity[]> {
  const stored = await storedPlaces(db, TRAY_TARGET_ACTIONS, [...new Set(activities.map(targetActionId))]);
  return activities.map((activity) => {
    const id = targetActionId(activity);
    return stored.has(id) ? { ...activity, processed: stored.get(id) ?? KEPT_BEFORE_ORDER } : activity;
  });
}

const withPlace = (doc: Pick<TargetActionDoc, 'activity' | 'processed'>): KeptActivity => ({
  ...doc.activity,
  processed: doc.processed ?? KEPT_BEFORE_ORDER,
});

/**
 * A record group's kept actions, every one of the retention window, by equality on `group`.
 * Nothing is pruned: each is a counted action until it expires (removals take theirs out).
 */
export async function readTargetActions(db: Db, group: string): Promise<KeptActivity[]> {
  const docs = await db
    .collection<TargetActionDoc>(TRAY_TARGET_ACTIONS)
    .find({ group }, { projection: { _id: 0, activity: 1, processed: 1 }, batchSize: WHOLE_GROUP })
    .toArray();
  return docs.map(withPlace);
}

/** The kept actions addressed to `userId` on `communityId`'s targets, by equality on `member`. */
export async function readMemberActions(
  db: Db,
  communityId: string,
  userId: string,
): Promise<KeptActivity[]> {
  const docs = await db
    .collection<TargetActionDoc>(TRAY_TARGET_ACTIONS)
    .find({ member: memberKey(communityId, userId) }, { projection: { _id: 0, activity: 1, processed: 1 } })
    .toArray();
  return docs.map(withPlace);
}

/** Members per `$in` of readMembersActions: a join of thousands in a few queries of bounded size. */
const MEMBERS_PER_QUERY = 1_000;

/**
 * The kept actions addressed to each of `userIds` on `communityId`'s targets, by user (an entry for
 * each): by `$in` on `member`, a thousand members per query, not a query per member. FerretDB
 * filters an `$in` over the whole collection and a point query scans it too, so a query per member
 * of a large join was quadratic; a thousand per query divides that by a thousand.
 */
export async function readMembersActions(
  db: Db,
  communityId: string,
  userIds: readonly string[],
): Promise<Map<string, Activity[]>> {
  const found = new Map<string, Activity[]>(userIds.map((userId) => [userId, []]));
  const byMember = new Map(userIds.map((userId) => [memberKey(communityId, userId), userId]));
  const members = [...byMember.keys()];
  for (let start = 0; start < members.length; start += MEMBERS_PER_QUERY) {
    const docs = await db
      .collection<TargetActionDoc>(TRAY_TARGET_ACTIONS)
      .find(
        { member: { $in: members.slice(start, start + MEMBERS_PER_QUERY) } },
        { projection: { _id: 0, member: 1, activity: 1, processed: 1 }, batchSize: WHOLE_GROUP },
      )
      .toArray();
    for (const doc of docs) {
      const userId = doc.member === undefined ? undefined : byMember.get(doc.member);
      if (userId !== undefined) found.get(userId)?.push(withPlace(doc));
    }
  }
  return found;
}

/** Rewrites a deleted user's snapshot in every action kept to `as` (user.didDelete: deletedActor). */
export async function renameKeptActor(db: Db, as: ActorInfo): Promise<void> {
  await db
    .collection<TargetActionDoc>(TRAY_TARGET_ACTIONS)
    .updateMany({ 'activity.actor.userId': as.userId }, { $set: { 'activity.actor': as } });
}
