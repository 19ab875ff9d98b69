import type { Db } from 'mongodb';
import type { Activity } from '../../../domain/activity.ts';
import { isMemberAt } from '../../../domain/membership-intervals.ts';
import {
  communityChangesFingerprints,
  communityMembers,
  type MemberSpans,
} from '../memberships/membership-changes.ts';
import { recordGroup } from '../records/storage-keys.ts';
import { readRecordGroup } from './read-record-group.ts';
import { recomputeMemberRecords } from './recompute-member-records.ts';
import { memberOf, recordActions, writeDeliveries, type GroupingOptions } from './write-deliveries.ts';

/**
 * The one fan-out entry point (the storage port's fanOutPosts): posts of one community, whole.
 * Their actions join their groups' actors, then each record group's posts go out in one fan-out.
 */
export async function fanOutCommunityPosts(
  db: Db,
  communityId: string,
  posts: readonly Activity[],
  options: GroupingOptions,
): Promise<void> {
  const addressed = posts.map((post) => ({ ...post, audience: { kind: 'community' as const, communityId } }));
  await recordActions(db, addressed, options.retentionDays);
  const byGroup = new Map<string, Activity[]>();
  for (const post of addressed) {
    const group = recordGroup(post.verb, post.targetId);
    byGroup.set(group, [...(byGroup.get(group) ?? []), post]);
  }
  for (const group of byGroup.values()) await fanOutPosts(db, group, options);
}

/**
 * Community posts of one record group and community, fanned out together: the community's
 * members and the group's records are read once, and each member's record takes every post the
 * member was there for in one compare-and-set write (membership by time: a post reaches those who
 * were members at its createdAt; an author is never notified of their own post).
 */
async function fanOutPosts(db: Db, posts: readonly Activity[], options: GroupingOptions): Promise<void> {
  const [post] = posts;
  if (post?.audience.kind !== 'community') return;
  const { communityId } = post.audience;
  const group = recordGroup(post.verb, post.targetId);
  const readGroup = () => readRecordGroup(db, group);
  // Independent reads, at once: the members, and their records (a second or two each at 10,000).
  const [members, first] = await Promise.all([communityMembers(db, communityId), readGroup()]);
  const recipients: { recipientId: string; received: Activity[] }[] = [];
  for (const [recipientId, spans] of members) {
    const received = posts.filter(
      (activity) => activity.actor.userId !== recipientId && isMemberAt(spans.intervals, activity.at),
    );
    if (received.length > 0) recipients.push({ recipientId, received });
  }
  const keyed = (found: ReadonlyMap<string, MemberSpans>) =>
    new Map([...found].map(([userId, member]) => [memberOf(communityId, userId), member]));
  // The members as read first, then as read again by a compare-and-set round that retries.
  const spans = { first: keyed(members), reload: async () => keyed(await communityMembers(db, communityId)) };
  for (let start = 0; start < recipients.length; start += options.fanOutBatch) {
    // Mutes are read per batch by target inside the write (one query, never one per member).
    const batch = recipients
      .slice(start, start + options.fanOutBatch)
      .flatMap(({ recipientId, received }) => received.map((activity) => ({ recipientId, activity })));
    await writeDeliveries(db, batch, options, { read: readGroup, first }, spans);
  }
  // A leave stored since the members were read, whose recomputation read a member's record before
  // this fan-out wrote it, is applied now (a join's backfill sees the post: its event came first).
  const now = await communityChangesFingerprints(db, communityId);
  for (const userId of new Set([...members.keys(), ...now.keys()])) {
    if ((members.get(userId)?.changes ?? '') === (now.get(userId) ?? '')) continue;
    await recomputeMemberRecords(db, communityId, userId, {
      retentionDays: options.retentionDays,
      owner: options.owner,
      now: options.now ?? Date.now,
      ...(options.onWritten ? { onWritten: options.onWritten } : {}),
    });
  }
}
