import type { Db } from 'mongodb';
import type { KeyedLock } from '../../../../shared/async/keyed-lock.ts';
import type { RemovedRecord } from '../../port.ts';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { recordKey, type Activity } from '../../../domain/activity.ts';
import { showsDeleted } from '../../../domain/deleted-user.ts';
import type { GroupActors } from '../../../domain/group-actors.ts';
import { heldBackByMutes, type Mute } from '../../../domain/mute.ts';
import { spansCovering } from '../mutes/muted-deliveries.ts';
import { casUpdateRecords, type RecordSnapshot } from '../compare-and-set/cas-update-records.ts';
import { membersSpans, type MemberSpans } from '../memberships/membership-changes.ts';
import { recordGroup } from '../records/storage-keys.ts';
import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';
import { applyActivity, type ApplyOptions } from './apply-activity.ts';
import { communityOf, keepTargetActions, readTargetActions } from './target-actions.ts';
import type { KeptActivity } from '../../../domain/kept-activity.ts';
import { readGroupActors, recordGroupActions } from './target-actors.ts';

/** What the worker's record writes are told (mongo-writes.ts makes them from the port's WriteContext). */
export interface GroupingOptions extends ApplyOptions {
  /** Recipients per compare-and-set call of a fan-out (TRAY_FANOUT_BATCH). */
  fanOutBatch: number;
  /** Whose version claims these writes take: the job's dedupe key (claim-owner.ts). */
  owner: string;
  /** The worker's in-process lock: its own jobs queue up on a hot record instead of colliding. */
  lock?: KeyedLock;
  /** The tray's clock (epoch ms); tests pin it. */
  now?: () => number;
  /** Told of every record written (live streams, docs/live-tray.md). */
  onWritten?: (records: readonly TrayRecordDoc[]) => Promise<void>;
  /**
   * Told of every record these writes deleted: through a removal (removals/reapply-removals.ts) or
   * a leave (recompute-member-records.ts) stored while they ran.
   */
  onRemoved?: (records: readonly RemovedRecord[]) => Promise<void>;
  /** everyActionKeptSince (removals/kept-since.ts); 0 when unknown. */
  keptSince?: number;
}

/** One activity for one recipient's record. */
export interface Delivery {
  recipientId: string;
  activity: Activity;
}

/** A member's key in the spans maps: JSON [community, user]. */
export const memberOf = (communityId: string, userId: string) => JSON.stringify([communityId, userId]);

/**
 * Adds each activity's action to its record group's actors (kept once per target, whatever the
 * audience) before any record is computed from them.
 */
export async function recordActions(
  db: Db,
  activities: readonly Activity[],
  retentionDays: number,
): Promise<KeptActivity[]> {
  // Kept before any record is computed: a join whose backfill reads them after this finds them,
  // or this write's records see the join's spans (the same order as a post's event and its fan-out).
  const kept = await keepTargetActions(db, activities, retentionDays);
  await recordGroupActions(
    db,
    activities.map((activity) => ({
      group: recordGroup(activity.verb, activity.targetId),
      action: { actor: activity.actor, at: activity.at, actionId: activity.lastActionId },
      expiresAt: new Date(activity.at + retentionDays * DAY_MS),
    })),
  );
  return kept;
}

/** What writeDeliveries wrote, for the checks its callers run after it. */
export interface WrittenDeliveries {
  /**
   * By member, the spans its first round read: every record it wrote was computed from those or
   * later ones, so a join or leave stored since that read is one a write may have missed (a later
   * round's read says nothing of what an earlier round wrote). Empty for a fan-out (`known`).
   */
  spans: Map<string, MemberSpans>;
  /** The users whose records it wrote. */
  recipients: Set<string>;
  /** The actors its records name with a snapshot of their own (not as deleted: deleted-user.ts). */
  named: Set<string>;
}

/**
 * Writes the deliveries' records by compare-and-set. On a community's targets each recipient's
 * away spans gate and count what reaches them: `known` (a fan-out's, read with the community's
 * members) or read each round. Mutes are read each round too (spansCovering: one query for the
 * whole call): a delivery a mute of its recipient holds back makes no record and changes none, and a
 * recipient with mute spans on these targets or on any actor of their groups, on a user feed as on
 * a community's target, has their records counted from the group's kept actions without what the
 * spans held back. Returns what it wrote (WrittenDeliveries).
 */
export async function writeDeliveries(
  db: Db,
  deliveries: Delivery[],
  options: GroupingOptions,
  reads: { read: () => Promise<RecordSnapshot>; first: RecordSnapshot } | undefined = undefined,
  known:
    | { first: ReadonlyMap<string, MemberSpans>; reload: () => Promise<ReadonlyMap<string, MemberSpans>> }
    | undefined = undefined,
): Promise<WrittenDeliveries> {
  if (deliveries.length === 0) return { spans: new Map(), recipients: new Set(), named: new Set() };
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
  /** The community `post` record groups: a mute of any of their kept posts may hold one back. */
  const postGroups = new Set(
    deliveries
      .filter(({ activity }) => activity.verb === 'post')
      .map(({ activity }) => recordGroup(activity.verb, activity.targetId)),
  );
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
  const recipients = new Set(deliveries.map(({ recipientId }) => recipientId));
  let mutes = new Map<string, Mute[]>();
  const actors = new Map<string, GroupActors>();
  const spans = new Map<string, MemberSpans>();
  const firstRead = new Map<string, MemberSpans>();
  const kept = new Map<string, Activity[]>();
  const now = options.now ?? Date.now;
  let at = now();
  let rounds = 0;
  const compute = (key: string, current: TrayRecordDoc | undefined) => {
    // A record past its retention is gone, purged or not (the purge runs hourly on FerretDB, and
    // MongoDB's TTL monitor lags): new activity starts it afresh, counting from itself, as on
    // PostgreSQL. The stored document still sets the version the write claims.
    const live = current && current.expiresAt.getTime() > at ? current : undefined;
    let next = live;
    for (const { activity, recipientId } of byKey.get(key) ?? []) {
      const group = recordGroup(activity.verb, activity.targetId);
      const groupActors = actors.get(group);
      if (!groupActors) throw new Error(`record group of ${key} was not read`);
      const communityId = communityOf(activity);
      const member = communityId === undefined ? undefined : spans.get(memberOf(communityId, recipientId));
      const actions = kept.get(group);
      const muteSpans = mutes.get(recipientId);
      // Held back by a mute: no record made, none changed.
      if (muteSpans && heldBackByMutes(muteSpans, activity)) continue;
      const applied = applyActivity(next, activity, recipientId, {
        retentionDays: options.retentionDays,
        actors: groupActors,
        now: at,
        ...(member ? { away: member.away, edges: member.edges } : {}),
        ...(actions ? { actions } : {}),
        ...(actions && muteSpans
          ? { heldBack: (action: Activity) => heldBackByMutes(muteSpans, action) }
          : {}),
      });
      if (applied !== 'unchanged') next = applied;
    }
    if (next === live || next === undefined) return 'unchanged';
    // An expired record is never shown (docs/tray-engine.md#retention): a delivery that leaves one
    // so (an older action replayed long after) writes nothing, and no stream is told of it.
    if (next.expiresAt.getTime() <= at) return 'unchanged';
    // One version step however many deliveries were folded: the claim is for exactly the next one.
    return { ...next, version: current ? current.version + 1 : at };
  };
  const recipientsWritten = new Set<string>();
  const named = new Set<string>();
  await casUpdateRecords(db, [...byKey.keys()], compute, {
    owner: options.owner,
    now,
    onWritten: async (records) => {
      for (const record of records) {
        recipientsWritten.add(record.userId);
        for (const actor of record.actors) if (!showsDeleted(actor)) named.add(actor.userId);
      }
      if (options.onWritten) await options.onWritten(records);
    },
    ...(reads ? { read: reads.read, first: reads.first } : {}),
    refresh: async () => {
      at = now();
      for (const group of groups) actors.set(group, await readGroupActors(db, group));
      // Read after the records, like the actors: a round never computes from spans older than them
      // (a fan-out's first round uses the members it read before the batch's records; a join or
      // leave stored since is caught by its fingerprint check, fan-out-posts.ts).
      // The recipients' mute spans on what could cover these deliveries or any actor their records
      // count (a user mute of an earlier actor), one query by target whatever the audience's size.
      const actorIds = new Set<string>();
      for (const group of groups)
        for (const action of actors.get(group)?.actions ?? []) actorIds.add(action.actor.userId);
      // A community's post record counts its earlier posts too: a mute of one of them (put before
      // it came) held it back, so their targets are looked up with the deliveries'.
      const keptPosts = new Map<string, Activity[]>();
      for (const group of postGroups) keptPosts.set(group, await readTargetActions(db, group));
      mutes = await spansCovering(
        db,
        [...deliveries.map(({ activity }) => activity), ...[...keptPosts.values()].flat()],
        recipients,
        actorIds,
      );
      // Kept actions are what a record is counted from exactly: for a recipient whose mutes may
      // have held some of them back, on a user feed as on a community's target.
      const exact = new Set(
        deliveries
          .filter(({ recipientId }) => mutes.has(recipientId))
          .map(({ activity }) => recordGroup(activity.verb, activity.targetId)),
      );
      const community = known && (rounds++ === 0 ? known.first : await known.reload());
      // The members the fan-out did not read, a community at a time (membersSpans): a mention of
      // thousands reads their spans in one query, not one per member.
      const unknown = new Map<string, Set<string>>();
      for (const [member, { communityId, userId }] of scoped)
        if (!community?.has(member))
          unknown.set(communityId, (unknown.get(communityId) ?? new Set()).add(userId));
      const read = new Map<string, MemberSpans>();
      for (const [communityId, userIds] of unknown)
        for (const [userId, found] of await membersSpans(db, communityId, userIds))
          read.set(memberOf(communityId, userId), found);
      for (const [member, { groups: ofMember }] of scoped) {
        const found = community?.get(member) ?? read.get(member);
        if (!found) throw new Error(`spans of ${member} were not read`);
        spans.set(member, found);
        if (!firstRead.has(member)) firstRead.set(member, found);
        // And for a recipient ever away.
        if (found.away.length > 0) for (const group of ofMember) exact.add(group);
      }
      // The kept actions only of groups with a recipient ever away or muted: most writes read none.
      kept.clear();
      for (const group of exact)
        kept.set(group, keptPosts.get(group) ?? (await readTargetActions(db, group)));
    },
  });
  return { spans: known ? new Map() : firstRead, recipients: recipientsWritten, named };
}
