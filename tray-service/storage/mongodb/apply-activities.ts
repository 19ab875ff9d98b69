import type { Db } from 'mongodb';
import type { KeyedLock } from '../../../shared/async/keyed-lock.ts';
import { DAY_MS } from '../../../shared/time/durations.ts';
import { recordGroup } from './storage-keys.ts';
import { TRAY_RECORDS } from './collection-names.ts';
import { type TrayRecordDoc } from './tray-record-doc.ts';
import { recordKey, type Activity } from '../../domain/activity.ts';
import { applyActivity, type ApplyOptions } from './apply-activity.ts';
import type { GroupActors } from '../../domain/group-actors.ts';
import { casUpdateRecords, type RecordSnapshot } from './cas-update-records.ts';
import { isMemberAt } from '../../domain/membership-intervals.ts';
import {
  communityChangesFingerprints,
  communityMembers,
  memberChangesFingerprint,
  memberSpans,
  type MemberSpans,
} from './membership-store.ts';
import { WHOLE_GROUP } from './read-by-ids.ts';
import { recomputeMemberRecords } from './recompute-member-records.ts';
import { communityOf, keepTargetActions, readTargetActions } from './target-actions-store.ts';
import { readGroupActors, recordGroupAction } from './target-actors-store.ts';

export interface ApplyActivitiesOptions extends ApplyOptions {
  /** Recipients per compare-and-set call of a fan-out (TRAY_FANOUT_BATCH). */
  fanOutBatch: number;
  /** The job's dedupe key (owner of its write claims). */
  owner: string;
  /** The worker's in-process lock: its own jobs queue up on a hot record instead of colliding. */
  lock?: KeyedLock;
  /** Runs each community-post fan-out, at most a few at once per process (memory). */
  fanOuts?: RunFanOut;
  /**
   * Gathers the posts of one community waiting in this process into one fan-out (startWorker gives
   * keyedBatches): the members' records are rewritten once for them all, not once per post.
   */
  batchPosts?: BatchPosts;
  /** The tray's clock (epoch ms); tests pin it. */
  now?: () => number;
  /** Told of every record written (live streams, docs/live-tray.md). */
  onWritten?: (records: readonly TrayRecordDoc[]) => Promise<void>;
}

/** Runs one fan-out when a slot is free (startWorker gives a p-limit). */
export type RunFanOut = (fanOut: () => Promise<void>) => Promise<void>;

/** Submits a post to the fan-outs of its key (its community's record group); `run` fans out a batch. */
export type BatchPosts = (
  key: string,
  post: Activity,
  run: (posts: readonly Activity[]) => Promise<void>,
) => Promise<void>;

interface Delivery {
  recipientId: string;
  activity: Activity;
}

/** A member's key in the spans maps: JSON [community, user]. */
const memberOf = (communityId: string, userId: string) => JSON.stringify([communityId, userId]);

/**
 * Turns activities into record writes. Each activity's action is first added to its record
 * group's actors (kept once per target), then every recipient's record is recomputed from them:
 * personal activities (comment, reply, reaction, mention) cost one compare-and-set round on one
 * or two records; a community post reads the community's members and the group's records by
 * equality and rewrites them in bulk. On a community's targets, a recipient gets nothing of the
 * time they were away from the community (docs/tray-rules.md#leaving-and-rejoining-a-community).
 */
export async function applyActivities(
  db: Db,
  activities: readonly Activity[],
  options: ApplyActivitiesOptions,
): Promise<void> {
  await applyPersonalActivities(db, activities, options);
  const fanOuts: RunFanOut = options.fanOuts ?? ((fanOut) => fanOut());
  const batchPosts: BatchPosts = options.batchPosts ?? ((_key, post, run) => run([post]));
  for (const activity of activities) {
    const { audience } = activity;
    if (audience.kind !== 'community') continue;
    await batchPosts(
      JSON.stringify([recordGroup(activity.verb, activity.targetId), audience.communityId]),
      activity,
      (posts) => fanOuts(() => fanOutPosts(db, posts, options)),
    );
  }
}

/**
 * Adds each activity's action to its record group's actors (kept once per target, whatever the
 * audience), then regroups the records of the activities addressed to one user. Community posts
 * get their actors here too; their records are written by fanOutCommunityPosts. On a community's
 * targets the recipient's away spans are read in each compare-and-set round and once more after
 * the write: a join or leave stored meanwhile is then applied to the member's records here
 * (recomputeMemberRecords), so a leave whose own recomputation read the record before this write
 * landed is not lost.
 */
export async function applyPersonalActivities(
  db: Db,
  activities: readonly Activity[],
  options: ApplyActivitiesOptions,
): Promise<void> {
  await recordActions(db, activities, options.retentionDays);
  // An author is never notified of their own action.
  const personal: Delivery[] = activities.flatMap((activity) =>
    activity.audience.kind === 'user' && activity.audience.userId !== activity.actor.userId
      ? [{ recipientId: activity.audience.userId, activity }]
      : [],
  );
  const used = await writeDeliveries(db, personal, options);
  for (const [member, spans] of used) {
    const [communityId, userId] = JSON.parse(member) as [string, string];
    if ((await memberChangesFingerprint(db, communityId, userId)) === spans.changes) continue;
    await recomputeMemberRecords(db, communityId, userId, {
      retentionDays: options.retentionDays,
      owner: options.owner,
      now: options.now ?? Date.now,
      ...(options.onWritten ? { onWritten: options.onWritten } : {}),
    });
  }
}

/**
 * Posts of one community, whole: their actions join their groups' actors, then each record group's
 * posts go out in one fan-out (the storage port's fanOutPosts).
 */
export async function fanOutCommunityPosts(
  db: Db,
  communityId: string,
  posts: readonly Activity[],
  options: ApplyActivitiesOptions,
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

async function recordActions(db: Db, activities: readonly Activity[], retentionDays: number): Promise<void> {
  // Kept before any record is computed: a join whose backfill reads them after this finds them,
  // or this write's records see the join's spans (the same order as a post's event and its fan-out).
  await keepTargetActions(db, activities, retentionDays);
  for (const activity of activities) {
    await recordGroupAction(
      db,
      recordGroup(activity.verb, activity.targetId),
      { actor: activity.actor, at: activity.at, actionId: activity.lastActionId },
      new Date(activity.at + retentionDays * DAY_MS),
    );
  }
}

/**
 * Community posts of one record group and community, fanned out together: the community's
 * members and the group's records are read once, and each member's record takes every post the
 * member was there for in one compare-and-set write (membership by time: a post reaches those who
 * were members at its createdAt; an author is never notified of their own post).
 */
async function fanOutPosts(
  db: Db,
  posts: readonly Activity[],
  options: ApplyActivitiesOptions,
): Promise<void> {
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

/** Every recipient's record of one group, by equality on `group` (one index lookup). */
async function readRecordGroup(db: Db, group: string): Promise<RecordSnapshot> {
  const docs = await db
    .collection<TrayRecordDoc>(TRAY_RECORDS)
    .find({ group }, { batchSize: WHOLE_GROUP })
    .toArray();
  return new Map(docs.map((doc) => [doc._id, doc]));
}

/**
 * Writes the deliveries' records by compare-and-set. On a community's targets each recipient's
 * away spans gate and count what reaches them: `known` (a fan-out's, read with the community's
 * members) or read each round. Returns the spans the last round used, by member.
 */
async function writeDeliveries(
  db: Db,
  deliveries: Delivery[],
  options: ApplyActivitiesOptions,
  reads: { read: () => Promise<RecordSnapshot>; first: RecordSnapshot } | undefined = undefined,
  known:
    | { first: ReadonlyMap<string, MemberSpans>; reload: () => Promise<ReadonlyMap<string, MemberSpans>> }
    | undefined = undefined,
): Promise<Map<string, MemberSpans>> {
  if (deliveries.length === 0) return new Map();
  if (options.lock) {
    const { lock, ...unlocked } = options;
    const keys = deliveries.map(({ activity, recipientId }) =>
      recordKey(activity.verb, activity.targetId, recipientId),
    );
    return lock.run(keys, () => writeDeliveries(db, deliveries, unlocked, reads, known));
  }
  // Several deliveries of one job may share a record (a user mentioned twice): fold them in order.
  const byKey = new Map<string, Delivery[]>();
  for (const delivery of deliveries) {
    const key = recordKey(delivery.activity.verb, delivery.activity.targetId, delivery.recipientId);
    byKey.set(key, [...(byKey.get(key) ?? []), delivery]);
  }
  const groups = new Set(deliveries.map(({ activity }) => recordGroup(activity.verb, activity.targetId)));
  /** The members whose spans count here: recipients on a community's targets. */
  const scoped = new Map<string, { communityId: string; userId: string; groups: Set<string> }>();
  for (const { activity, recipientId } of deliveries) {
    const communityId = communityOf(activity);
    if (communityId === undefined) continue;
    const member = memberOf(communityId, recipientId);
    const entry = scoped.get(member) ?? { communityId, userId: recipientId, groups: new Set<string>() };
    entry.groups.add(recordGroup(activity.verb, activity.targetId));
    scoped.set(member, entry);
  }
  const actors = new Map<string, GroupActors>();
  const spans = new Map<string, MemberSpans>();
  const kept = new Map<string, Activity[]>();
  const now = options.now ?? Date.now;
  let at = now();
  let rounds = 0;
  const compute = (key: string, current: TrayRecordDoc | undefined) => {
    let next = current;
    for (const { activity, recipientId } of byKey.get(key) ?? []) {
      const group = recordGroup(activity.verb, activity.targetId);
      const groupActors = actors.get(group);
      if (!groupActors) throw new Error(`record group of ${key} was not read`);
      const communityId = communityOf(activity);
      const member = communityId === undefined ? undefined : spans.get(memberOf(communityId, recipientId));
      const actions = kept.get(group);
      const applied = applyActivity(next, activity, recipientId, {
        retentionDays: options.retentionDays,
        actors: groupActors,
        now: at,
        ...(member ? { away: member.away } : {}),
        ...(actions ? { actions } : {}),
      });
      if (applied !== 'unchanged') next = applied;
    }
    if (next === current || next === undefined) return 'unchanged';
    // One version step however many deliveries were folded: the claim is for exactly the next one.
    return { ...next, version: current ? current.version + 1 : at };
  };
  await casUpdateRecords(db, [...byKey.keys()], compute, {
    owner: options.owner,
    now,
    ...(options.onWritten ? { onWritten: options.onWritten } : {}),
    ...(reads ? { read: reads.read, first: reads.first } : {}),
    refresh: async () => {
      at = now();
      for (const group of groups) actors.set(group, await readGroupActors(db, group));
      // Read after the records, like the actors: a round never computes from spans older than them
      // (a fan-out's first round uses the members it read with the records).
      const away = new Set<string>();
      const community = known && (rounds++ === 0 ? known.first : await known.reload());
      for (const [member, { communityId, userId, groups: ofMember }] of scoped) {
        const found = community?.get(member) ?? (await memberSpans(db, communityId, userId));
        spans.set(member, found);
        if (found.away.length > 0) for (const group of ofMember) away.add(group);
      }
      // The kept actions only of groups with a recipient who was ever away: most writes read none.
      kept.clear();
      for (const group of away) kept.set(group, await readTargetActions(db, group));
    },
  });
  return known ? new Map() : spans;
}
