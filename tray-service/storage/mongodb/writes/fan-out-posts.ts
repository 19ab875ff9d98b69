import type { Db } from 'mongodb';
import { recordKey, type Activity } from '../../../domain/activity.ts';
import { withDeletedActors } from '../../../domain/deleted-user.ts';
import { memberFor } from '../../../domain/membership-intervals.ts';
import { processedOf } from '../../../domain/kept-activity.ts';
import {
  communityChangesFingerprints,
  communityMembers,
  type MemberSpans,
} from '../memberships/membership-changes.ts';
import { recordGroup } from '../records/storage-keys.ts';
import { readByIds } from '../compare-and-set/read-by-ids.ts';
import { readRecordGroup } from '../grouping/read-record-group.ts';
import { forgetDeletedUsers } from '../grouping/apply-profile-changes.ts';
import { deletedAmong } from '../grouping/deleted-users.ts';
import { reapplyDeletions } from '../grouping/reapply-deletions.ts';
import { recomputeMemberRecords, recomputeOptionsOf } from '../grouping/recompute-member-records.ts';
import { reapplyRemovals } from '../removals/reapply-removals.ts';
import { withoutVoided } from '../removals/tombstones.ts';
import { reapplyToVoided } from '../removals/reapply-to-voided.ts';
import {
  memberOf,
  recordActions,
  writeDeliveries,
  type GroupingOptions,
} from '../grouping/write-deliveries.ts';

/**
 * The one fan-out entry point (the storage port's fanOutPosts): posts of one community, whole.
 * Their actions join their groups' actors, then each record group's posts go out in one fan-out. A
 * deleted post is a no-op (docs/tray-rules.md#inbox), and a removal stored while the fan-out ran is
 * applied again after it (reapplyRemovals). A deleted author shows as deleted, and a deletion
 * stored while the fan-out ran is applied again after it (reapplyDeletions; for the members, in
 * fanOutPosts).
 */
export async function fanOutCommunityPosts(
  db: Db,
  communityId: string,
  posts: readonly Activity[],
  options: GroupingOptions,
): Promise<void> {
  const { live, seen } = await withoutVoided(db, posts);
  await reapplyToVoided(db, posts, live, options);
  const deleted = await deletedAmong(
    db,
    live.map((post) => post.actor.userId),
  );
  // Each with its place in the processing order (a redelivered one its first): whom it reaches.
  const addressed = await recordActions(
    db,
    withDeletedActors(live, deleted).map((post) => ({
      ...post,
      audience: { kind: 'community' as const, communityId },
    })),
    options.retentionDays,
  );
  const byGroup = new Map<string, Activity[]>();
  for (const post of addressed) {
    const group = recordGroup(post.verb, post.targetId);
    byGroup.set(group, [...(byGroup.get(group) ?? []), post]);
  }
  const named = new Set<string>();
  for (const group of byGroup.values())
    for (const userId of await fanOutPosts(db, group, options)) named.add(userId);
  await reapplyRemovals(db, addressed, options, seen);
  for (const post of addressed) if (!deleted.has(post.actor.userId)) named.add(post.actor.userId);
  await reapplyDeletions(db, named, options);
}

/**
 * Community posts of one record group and community, fanned out together: the community's
 * members are read once and each batch's records as it starts, and each member's record takes every post the
 * member was there for in one compare-and-set write (membership by time: a post reaches those who
 * were members at its createdAt; an author is never notified of their own post; a deleted member is
 * reached by nothing, looked up once per batch of members). Returns the actors its records name
 * with a snapshot of their own.
 */
async function fanOutPosts(
  db: Db,
  posts: readonly Activity[],
  options: GroupingOptions,
): Promise<Set<string>> {
  const named = new Set<string>();
  const [post] = posts;
  if (post?.audience.kind !== 'community') return named;
  const { communityId } = post.audience;
  const group = recordGroup(post.verb, post.targetId);
  const readGroup = () => readRecordGroup(db, group);
  const members = await communityMembers(db, communityId);
  const recipients: { recipientId: string; received: Activity[] }[] = [];
  for (const [recipientId, spans] of members) {
    const received = posts.filter(
      // A member for the post as when it was first processed: a leave processed after it takes
      // nothing back, also from a redelivery (memberFor).
      (activity) =>
        activity.actor.userId !== recipientId && memberFor(spans.edges, activity.at, processedOf(activity)),
    );
    if (received.length > 0) recipients.push({ recipientId, received });
  }
  const keyed = (found: ReadonlyMap<string, MemberSpans>) =>
    new Map([...found].map(([userId, member]) => [memberOf(communityId, userId), member]));
  // The members as read first, then as read again by a compare-and-set round that retries.
  const spans = { first: keyed(members), reload: async () => keyed(await communityMembers(db, communityId)) };
  for (let start = 0; start < recipients.length; start += options.fanOutBatch) {
    const chunk = recipients.slice(start, start + options.fanOutBatch);
    const deleted = await deletedAmong(
      db,
      chunk.map(({ recipientId }) => recipientId),
    );
    // Mutes are read per batch by target inside the write (one query, never one per member).
    const batch = chunk
      .filter(({ recipientId }) => !deleted.has(recipientId))
      .flatMap(({ recipientId, received }) => received.map((activity) => ({ recipientId, activity })));
    // Each batch's records read as it starts, not the whole group before the first: a record a
    // delete-all removed meanwhile was taken for one deleted after this call wrote it, and its
    // member never got the post (PostgreSQL's statement per batch reads it afresh too).
    const first = await readByIds(
      db,
      chunk.map(({ recipientId }) => recordKey(post.verb, post.targetId, recipientId)),
    );
    const written = await writeDeliveries(db, batch, options, { read: readGroup, first }, spans);
    for (const userId of written.named) named.add(userId);
  }
  // A leave stored since the members were read with a place before the post's, which this fan-out
  // did not see, holds it back now (a join's backfill sees the post: its event came first).
  // A deletion ends the user's memberships before it removes their tray, so a member deleted while
  // this ran is among these, and their tray is removed again instead.
  const now = await communityChangesFingerprints(db, communityId);
  const changed = [...new Set([...members.keys(), ...now.keys()])].filter(
    (userId) => (members.get(userId)?.changes ?? '') !== (now.get(userId) ?? ''),
  );
  const deleted = await deletedAmong(db, changed);
  if (deleted.size > 0)
    await forgetDeletedUsers(db, [...deleted], {
      owner: options.owner,
      ...(options.now ? { now: options.now } : {}),
      ...(options.onWritten ? { onWritten: options.onWritten } : {}),
    });
  for (const userId of changed) {
    if (deleted.has(userId)) continue;
    // A record this fan-out wrote (and told) that the leave left with nothing: told removed.
    await recomputeMemberRecords(db, communityId, userId, recomputeOptionsOf(options));
  }
  return named;
}
