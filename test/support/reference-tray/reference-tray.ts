import { DAY_MS } from '../../../shared/time/durations.ts';
import type { ActorSnapshot } from '../../../tray-service/domain/actor-snapshot.ts';
import {
  DELETED_USER_NAME,
  type Activity,
  type MembershipChange,
} from '../../../tray-service/domain/activity.ts';
import { withDeletedActors } from '../../../tray-service/domain/deleted-user.ts';
import { encodeRecordKey } from '../../../tray-service/domain/record-key.ts';
import type { TrayRecord, TrayVerb } from '../../../tray-service/domain/tray-record.ts';
import { archive, unarchive } from '../../../tray-service/domain/archive-mark.ts';
import {
  inInbox,
  reopened,
  type InboxChange,
  type InboxState,
} from '../../../tray-service/domain/inbox-state.ts';
import { heldBackByMutes, type Mute } from '../../../tray-service/domain/mute.ts';
import { putMute, removeMute, type MuteTarget } from '../../../tray-service/domain/mute-changes.ts';
import { type Removal } from '../../../tray-service/domain/removal.ts';
import { voidedByAny } from '../../../tray-service/domain/removal-voids.ts';
import { nextChangedAt } from '../../../tray-service/domain/next-changed-at.ts';
import { markReadAndSeen, markSeen, seenByLastRead } from '../../../tray-service/domain/seen-mark.ts';
import { snooze, unsnooze, wake } from '../../../tray-service/domain/snooze-mark.ts';
import { byteOrder } from './byte-order.ts';

/**
 * The tray as the rules define it (docs/tray-engine.md, docs/tray-rules.md, docs/contract.md),
 * computed the slow and obvious way: every action, membership change and community post is kept,
 * and each write recomputes the records it touches from them. No storage mechanics, no
 * optimisation: the storage conformance suite applies the same operations through each storage
 * adapter and expects the very records this model holds. Pure (no I/O, no clock of its own: every
 * operation carries the tray's clock, `now`).
 *
 * Order-independent where the rules say so: a redelivery changes nothing, actions delivered late
 * never move a record's latest fields backwards, and joins are judged by their own times whenever
 * they arrive (docs/tray-rules.md#leaving-and-rejoining-a-community): a join arriving after the
 * actions it precedes adds them. A leave is judged by its time too, but only for the actions
 * processed after it: an action on a community's target counts for a member unless a leave
 * covering its time (at or before it, with no join of the member between) was processed before
 * the action was, so a leave arriving late takes nothing back. The model is therefore a function
 * of its operations in order, not of their set: it numbers every action and membership change in
 * the order it first processes them. Order-dependent where the rules are: read marks and
 * delete-all act on the records as they are then, and a record rewritten after new actors joined
 * its group shows them. A deletion is final (docs/tray-rules.md#deleted-users): whatever is
 * delivered after it, its user's tray stays empty and their actions show them as `Deleted user`.
 */
export type TrayOperation =
  /** applyPersonal: activities addressed to one user each (comments, replies, reactions, mentions). */
  | { kind: 'personal'; activities: readonly Activity[]; now: number }
  /** fanOutPosts: posts of one community (their event stored first, so a late join finds them). */
  | { kind: 'posts'; communityId: string; posts: readonly Activity[]; now: number }
  | { kind: 'membership'; changes: readonly MembershipChange[]; now: number }
  /** user.didDelete at the platform's `at`. */
  | { kind: 'deleteProfile'; userId: string; at: number; now: number }
  | { kind: 'markRead'; userId: string; verb: TrayVerb; targetId: string; now: number }
  | { kind: 'markAllRead'; userId: string; now: number }
  /** POST v2/last-read: the user's last-read time becomes `now` (never moving backwards). */
  | { kind: 'lastRead'; userId: string; now: number }
  /** DELETE v3/delete-all: the records go, the clear time becomes `now`. */
  | { kind: 'deleteAll'; userId: string; now: number }
  /** post.didDelete, comment.didDelete, reaction.didRemove (docs/tray-rules.md#inbox). */
  | { kind: 'removal'; removals: readonly Removal[]; now: number }
  /** POST v3/records/seen: record keys, or every record in the inbox. */
  | { kind: 'seen'; userId: string; ids: readonly string[] | 'all'; now: number }
  /** POST v3/records/archive; with `all`, `readOnly` archives only records marked read. */
  | { kind: 'archive'; userId: string; ids: readonly string[] | 'all'; readOnly?: boolean; now: number }
  | { kind: 'unarchive'; userId: string; ids: readonly string[]; now: number }
  | { kind: 'snooze'; userId: string; ids: readonly string[]; until: number; now: number }
  | { kind: 'unsnooze'; userId: string; ids: readonly string[]; now: number }
  /** The wake-up at `now`: every snooze of an unexpired record whose `until` has come ends. */
  | { kind: 'wake'; now: number }
  | { kind: 'mute'; userId: string; target: MuteTarget; until: number | null; now: number }
  | { kind: 'unmute'; userId: string; target: MuteTarget; now: number };

/** The operations that answer how many records they changed (`data.updated`; unmute: 1 if removed). */
export type MarkOperation = Extract<
  TrayOperation,
  { kind: 'seen' | 'archive' | 'unarchive' | 'snooze' | 'unsnooze' | 'unmute' }
>;

/**
 * A record as the model holds it: what readers see (its inbox state included), plus the earliest
 * action it counts, the time of the action its latest fields come from, and the lowest lastUpdate
 * a recomputation may leave (a removal pins the record's place in history).
 */
export interface ModelRecord extends TrayRecord, InboxState {
  countFrom: number;
  lastActionAt: number;
  updateFloor: number;
}

/** What `seen` computes: the record's counted content, without its read and inbox state. */
type SeenRecord = Omit<ModelRecord, 'hasRead' | 'unreadAt' | 'changedAt' | 'updateFloor' | keyof InboxState>;

/** A join or leave, and when the model first processed it (its place in the operations' order). */
type Edge = { joined: boolean; at: number; processed: number };

const MAX_NAMED_ACTORS = 3;

/** Later time first; equal times by action id (byteOrder), so equal times still have one order. */
function newer(a: { at: number; actionId: string }, b: { at: number; actionId: string }): boolean {
  return a.at !== b.at ? a.at > b.at : byteOrder(a.actionId, b.actionId) > 0;
}

const asAction = (activity: Activity) => ({ at: activity.at, actionId: activity.lastActionId });

/** Member at `at`: the last change at or before it is a join; at an equal time the leave counts last. */
export function memberAt(edges: readonly Edge[], at: number): boolean {
  let last: Edge | undefined;
  for (const edge of edges) {
    if (edge.at > at) continue;
    if (!last || edge.at > last.at || (edge.at === last.at && !edge.joined)) last = edge;
  }
  return last?.joined ?? false;
}

/** Away at `at`: the tray knows a change of the user at or before it, and they are not a member then. */
export function awayAt(edges: readonly Edge[], at: number): boolean {
  return edges.some((edge) => edge.at <= at) && !memberAt(edges, at);
}

/**
 * Whether the join lets in an action at `at` processed at `processed`: the join is at or before
 * it, and no leave between them (a leave at the join's time included) was processed before the
 * join or before the action, whichever came last. A leave processed after both takes back nothing
 * the two made; a late join adds what falls in the span it opens by the leaves known when it is
 * processed.
 */
function joinLetsIn(edges: readonly Edge[], join: Edge, at: number, processed: number): boolean {
  const known = Math.max(join.processed, processed);
  return (
    join.joined &&
    join.at <= at &&
    !edges.some((edge) => !edge.joined && edge.at >= join.at && edge.at <= at && edge.processed < known)
  );
}

/** A member for an action at `at` processed at `processed`: some join lets it in (joinLetsIn). */
export function memberFor(edges: readonly Edge[], at: number, processed: number): boolean {
  return edges.some((join) => joinLetsIn(edges, join, at, processed));
}

/**
 * Away for an action other than a community post: no join lets it in, and the tray knew, when the action was processed,
 * a change of the user at or before it (one processed before the action). A recipient the tray
 * knew nothing of then is not away: a leave processed later takes nothing back, nor does a join
 * processed after that leave.
 */
export function awayFor(edges: readonly Edge[], at: number, processed: number): boolean {
  return (
    !memberFor(edges, at, processed) && edges.some((edge) => edge.at <= at && edge.processed < processed)
  );
}

/**
 * Away for a community's post: no join lets it in, and some join of the user at or before it
 * (whenever processed) or a leave processed before it. A post reaches members only: a late join
 * adds it only within the join's span (memberFor).
 */
export function awayForPost(edges: readonly Edge[], at: number, processed: number): boolean {
  return (
    !memberFor(edges, at, processed) &&
    edges.some((edge) => edge.at <= at && (edge.joined || edge.processed < processed))
  );
}

/** An action as kept: each action once per recipient (a mention of two users is two). */
const actionKey = (activity: Activity) =>
  JSON.stringify([activity.lastActionId, activity.audience.kind === 'user' ? activity.audience.userId : '']);

/** The actor as a record names them, at the action's time. */
const snapshotOf = (activity: Activity): ActorSnapshot => defined({ ...activity.actor, at: activity.at });

/** Drops fields that are undefined, so a model value compares equal to one read back from storage. */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as T;
}

export class ReferenceTray {
  readonly retentionDays: number;
  /** recipient -> key -> record */
  private readonly trays = new Map<string, Map<string, ModelRecord>>();
  /** verb+target -> every action on it, each once (actionKey) */
  private readonly groups = new Map<string, Map<string, Activity>>();
  /** community -> user -> joins and leaves */
  private readonly members = new Map<string, Map<string, Edge[]>>();
  /** community -> its posts, each once (what a late join adds) */
  private readonly posts = new Map<string, Map<string, Activity>>();
  private readonly lastReads = new Map<string, number>();
  private readonly clears = new Map<string, number>();
  /** kind+id -> the removal (tombstones: they void the actions they undo whenever those arrive) */
  private readonly removals = new Map<string, Removal>();
  /** owner -> every span of their mutes, ended ones included */
  private readonly mutes = new Map<string, Mute[]>();
  /**
   * recipient+key -> the changedAt the operation being applied stamped on the record: the model
   * changes a record once per operation, however many of its steps (activities, a rename and a
   * leave) reach it. An engine may write it more often, each write a millisecond later where the
   * clock does not move (nextChangedAt): snapshots compare changedAt to within that (tray-snapshot.ts).
   */
  private readonly written = new Map<string, number>();
  /** Users whose profile was deleted: they receive nothing more, and act as `Deleted user`. */
  private readonly deleted = new Set<string>();
  /** verb+target+actionKey -> when the model first processed the action (see Edge.processed). */
  private readonly processedAt = new Map<string, number>();
  /** The count of actions and membership changes processed so far: the next one's place. */
  private sequence = 0;

  constructor(options: { retentionDays: number }) {
    this.retentionDays = options.retentionDays;
  }

  /** Applies the operation; answers how many records a mark changed (1 for a removed mute), else 0. */
  apply(operation: TrayOperation): number {
    const { now } = operation;
    this.written.clear();
    switch (operation.kind) {
      case 'personal': {
        const activities = withDeletedActors(operation.activities, this.deleted);
        for (const activity of activities) this.recordAction(activity);
        for (const activity of activities) {
          if (activity.audience.kind === 'user') this.deliver(activity.audience.userId, activity, now);
        }
        return 0;
      }
      case 'posts': {
        // A community's post is on the community's own target, whatever the activity says.
        const posts = withDeletedActors(operation.posts, this.deleted)
          .map((post): Activity => ({
            ...post,
            communityId: operation.communityId,
            audience: { kind: 'community', communityId: operation.communityId },
          }))
          .filter((post) => !this.voided(post));
        for (const post of posts) {
          this.recordAction(post);
          this.communityPosts(operation.communityId).set(post.lastActionId, post);
        }
        for (const post of posts) {
          for (const userId of this.communityMembers(operation.communityId).keys())
            if (this.memberFor(post, userId)) this.deliver(userId, post, now);
        }
        return 0;
      }
      case 'membership':
        for (const change of operation.changes) this.addEdge(change.communityId, change.userId, change);
        // A join adds the time it opens (its span); a leave only stops what is processed after it.
        for (const change of operation.changes) if (change.active) this.backfill(change, now);
        return 0;
      case 'deleteProfile':
        this.deleteProfile(operation.userId, operation.at, now);
        return 0;
      case 'markRead': {
        const record = this.tray(operation.userId).get(
          encodeRecordKey({ verb: operation.verb, targetId: operation.targetId, userId: operation.userId }),
        );
        if (record && this.live(record, now)) change(record, markReadAndSeen(record), now);
        return 0;
      }
      case 'markAllRead':
        for (const record of this.tray(operation.userId).values())
          change(record, markReadAndSeen(record), now);
        return 0;
      case 'lastRead':
        this.lastReads.set(operation.userId, Math.max(this.lastRead(operation.userId), now));
        // The records it stops counting are seen; like the last-read time itself, no record change
        // for streams (they get the counts).
        for (const record of this.tray(operation.userId).values())
          if (this.live(record, now)) Object.assign(record, seenByLastRead(record, now));
        return 0;
      case 'deleteAll':
        this.trays.delete(operation.userId);
        this.clears.set(operation.userId, Math.max(this.clearedAt(operation.userId), now));
        return 0;
      case 'removal':
        this.remove(operation.removals, now);
        return 0;
      case 'seen':
        return this.mark(operation.userId, operation.ids, now, markSeen);
      case 'archive':
        return this.mark(
          operation.userId,
          operation.ids,
          now,
          (record) => archive(record, now),
          (record) => !operation.readOnly || record.hasRead,
        );
      case 'unarchive':
        return this.mark(operation.userId, operation.ids, now, unarchive);
      case 'snooze':
        return this.mark(operation.userId, operation.ids, now, (record) => snooze(record, operation.until));
      case 'unsnooze':
        return this.mark(operation.userId, operation.ids, now, unsnooze);
      case 'wake':
        for (const tray of this.trays.values())
          for (const record of tray.values())
            if (this.live(record, now)) change(record, wake(record, now), now);
        return 0;
      case 'mute':
        this.mutes.set(
          operation.userId,
          putMute(this.mutesOf(operation.userId), operation.userId, operation.target, operation.until, now),
        );
        return 0;
      case 'unmute': {
        const { mutes, removed } = removeMute(this.mutesOf(operation.userId), operation.target, now);
        this.mutes.set(operation.userId, mutes);
        return removed ? 1 : 0;
      }
    }
  }

  /**
   * Whether the community post reached the user as a member, by the order it was first processed
   * in (memberFor; mutes aside): its author never.
   */
  reachedByPost(post: Activity, userId: string): boolean {
    return post.actor.userId !== userId && this.memberFor(post, userId);
  }

  /** Whether the recipient of an action on a community's target was away for it (awayFor): it reached them in no way. */
  awayFromAction(activity: Activity, recipientId: string): boolean {
    return this.awayFor(activity, recipientId);
  }

  /** Every span of the user's mutes (in force or ended), oldest first. */
  mutesOf(userId: string): Mute[] {
    return [...(this.mutes.get(userId) ?? [])];
  }

  /** Every record of the user, expired ones included, as stored (copies). */
  storedRecords(userId: string): ModelRecord[] {
    return [...this.tray(userId).values()].map((record) => structuredClone(record));
  }

  /** Unexpired: lastUpdate + retention is still ahead of `now`. */
  live(record: Pick<TrayRecord, 'lastUpdate'>, now: number): boolean {
    return record.lastUpdate + this.retentionDays * DAY_MS > now;
  }

  lastRead(userId: string): number {
    return this.lastReads.get(userId) ?? 0;
  }

  clearedAt(userId: string): number {
    return this.clears.get(userId) ?? 0;
  }

  /** Users the model holds anything for (records, read marks, clears, memberships). */
  users(): string[] {
    const users = new Set([...this.trays.keys(), ...this.lastReads.keys(), ...this.clears.keys()]);
    for (const community of this.members.values()) for (const userId of community.keys()) users.add(userId);
    return [...users].sort();
  }

  private tray(userId: string): Map<string, ModelRecord> {
    let tray = this.trays.get(userId);
    if (!tray) this.trays.set(userId, (tray = new Map()));
    return tray;
  }

  private communityMembers(communityId: string): Map<string, Edge[]> {
    let community = this.members.get(communityId);
    if (!community) this.members.set(communityId, (community = new Map()));
    return community;
  }

  private communityPosts(communityId: string): Map<string, Activity> {
    let posts = this.posts.get(communityId);
    if (!posts) this.posts.set(communityId, (posts = new Map()));
    return posts;
  }

  private addEdge(communityId: string, userId: string, change: { active: boolean; at: number }): void {
    const members = this.communityMembers(communityId);
    const edges = members.get(userId) ?? [];
    if (!edges.some((edge) => edge.at === change.at && edge.joined === change.active))
      edges.push({ joined: change.active, at: change.at, processed: this.sequence++ });
    members.set(userId, edges);
  }

  /**
   * A mark on record keys (each once; another user's, unknown or expired keys are ignored) or on
   * every record in the inbox that `allOf` admits. Answers how many records it changed.
   */
  private mark(
    userId: string,
    ids: readonly string[] | 'all',
    now: number,
    changeOf: (record: ModelRecord) => InboxChange | undefined,
    allOf: (record: ModelRecord) => boolean = () => true,
  ): number {
    const tray = this.tray(userId);
    const records =
      ids === 'all'
        ? [...tray.values()].filter((record) => inInbox(record) && allOf(record))
        : [...new Set(ids)].flatMap((key) => tray.get(key) ?? []);
    let updated = 0;
    for (const record of records)
      if (this.live(record, now) && change(record, changeOf(record), now)) updated++;
    return updated;
  }

  /** Voided by a removal stored before (or with) it: the action is a no-op. */
  private voided(activity: Activity): boolean {
    return voidedByAny(this.removals.values(), activity);
  }

  /** Held back for the recipient by one of their mutes in force at the action's time. */
  private heldBack(recipientId: string, activity: Activity): boolean {
    return heldBackByMutes(this.mutes.get(recipientId) ?? [], activity);
  }

  /**
   * Removals (docs/tray-rules.md#inbox): each is kept as a tombstone; the actions it voids leave
   * their groups and the community's posts, and every record of a group that lost one is computed
   * again from what it still counts (shrink). A redelivered removal finds nothing to take.
   */
  private remove(removals: readonly Removal[], now: number): void {
    for (const removal of removals) this.removals.set(`${removal.kind}\u0000${removal.id}`, removal);
    const shrunk = new Set<string>();
    for (const [groupKey, group] of this.groups) {
      for (const [key, action] of group) {
        if (!voidedByAny(removals, action)) continue;
        group.delete(key);
        shrunk.add(groupKey);
      }
    }
    for (const posts of this.posts.values())
      for (const [key, post] of posts) if (voidedByAny(removals, post)) posts.delete(key);
    for (const [userId, tray] of this.trays) {
      for (const [key, record] of [...tray]) {
        if (shrunk.has(`${record.verb}\u0000${record.targetId}`)) this.shrink(userId, key, record, now);
      }
    }
  }

  /**
   * A record that lost actions: actors, count and the last action's fields from what it still
   * counts; gone when nothing is left. Its place in history, read and inbox state stay, and its
   * lastUpdate becomes the floor no later recomputation goes below.
   */
  private shrink(userId: string, key: string, record: ModelRecord, now: number): void {
    const counted = this.counted(record.verb, record.targetId, userId, record.countFrom);
    const [newest] = counted;
    if (!newest) {
      this.tray(userId).delete(key);
      return;
    }
    const { lastActionSegmentNo: _segment, ...rest } = record;
    const next: ModelRecord = defined({
      ...rest,
      actors: counted.slice(0, MAX_NAMED_ACTORS).map(snapshotOf),
      actorsCount: counted.length,
      lastActionId: newest.lastActionId,
      lastActionSegmentNo: newest.lastActionSegmentNo,
      lastActionAt: newest.at,
    });
    if (sameSeen(next, record)) return;
    this.tray(userId).set(key, {
      ...next,
      updateFloor: record.lastUpdate,
      changedAt: this.stampOnce(userId, key, record, now),
    });
  }

  /** Each action joins its group's actions, whoever it reaches; a redelivery adds nothing. */
  private recordAction(activity: Activity): void {
    if (this.voided(activity)) return;
    const key = `${activity.verb}\u0000${activity.targetId}`;
    let group = this.groups.get(key);
    if (!group) this.groups.set(key, (group = new Map()));
    if (!group.has(actionKey(activity))) group.set(actionKey(activity), activity);
    const processedKey = this.processedKey(activity);
    if (!this.processedAt.has(processedKey)) this.processedAt.set(processedKey, this.sequence++);
  }

  private processedKey(activity: Activity): string {
    return `${activity.verb}\u0000${activity.targetId}\u0000${actionKey(activity)}`;
  }

  private edges(communityId: string | undefined, userId: string): readonly Edge[] {
    return communityId === undefined ? [] : (this.members.get(communityId)?.get(userId) ?? []);
  }

  /** When the model first processed the action; one not yet processed is judged as processed now. */
  private processedOf(activity: Activity): number {
    return this.processedAt.get(this.processedKey(activity)) ?? this.sequence;
  }

  /** Away at the action's time for the recipient, by the changes known when it was processed (awayFor). */
  private awayFor(activity: Activity, recipientId: string): boolean {
    const rule = activity.verb === 'post' ? awayForPost : awayFor;
    return rule(this.edges(activity.communityId, recipientId), activity.at, this.processedOf(activity));
  }

  /** A member for the action (memberFor): whom a community's post reaches. */
  private memberFor(activity: Activity, recipientId: string): boolean {
    return memberFor(this.edges(activity.communityId, recipientId), activity.at, this.processedOf(activity));
  }

  /**
   * The actions a recipient's record counts, each actor at their latest one, newest first: the
   * group's actions at or after `countFrom` by others than the recipient, and on a community's
   * target only those that fell while the recipient was not away from it by the leaves processed
   * before them (edgesFor).
   */
  private counted(verb: TrayVerb, targetId: string, recipientId: string, countFrom: number): Activity[] {
    const latest = new Map<string, Activity>();
    for (const action of this.groups.get(`${verb}\u0000${targetId}`)?.values() ?? []) {
      if (action.at < countFrom || action.actor.userId === recipientId) continue;
      if (this.awayFor(action, recipientId)) continue;
      if (this.heldBack(recipientId, action)) continue;
      const seen = latest.get(action.actor.userId);
      if (!seen || newer(asAction(action), asAction(seen))) latest.set(action.actor.userId, action);
    }
    return [...latest.values()].sort((a, b) => (newer(asAction(a), asAction(b)) ? -1 : 1));
  }

  /** The changedAt of this operation's write of the record: one stamp however often it is written. */
  private stampOnce(recipientId: string, key: string, current: ModelRecord | undefined, now: number): number {
    const id = `${recipientId}\u0000${key}`;
    const stamped = this.written.get(id) ?? nextChangedAt(current?.changedAt, now);
    this.written.set(id, stamped);
    return stamped;
  }

  /**
   * Folds one action into a recipient's record (docs/tray-engine.md#records): the record is
   * recomputed from its group's actions from its countFrom on, the recipient excluded; the newest
   * action decides the latest fields; nothing the recipient sees changing leaves it as it was. An
   * action on a community's target that fell while the recipient was away reaches nothing.
   */
  private deliver(recipientId: string, activity: Activity, now: number): void {
    // An author is never notified of their own action, and a deleted user of anything.
    if (activity.actor.userId === recipientId || this.deleted.has(recipientId)) return;
    if (this.awayFor(activity, recipientId)) return;
    // A voided action is a no-op; a muted one makes and changes nothing for its recipient.
    if (this.voided(activity) || this.heldBack(recipientId, activity)) return;
    const key = encodeRecordKey({ verb: activity.verb, targetId: activity.targetId, userId: recipientId });
    const tray = this.tray(recipientId);
    const stored = tray.get(key);
    // A record past its retention is gone, purged or not: new activity starts a record afresh,
    // counting from itself (docs/tray-rules.md: re-created after expiry).
    const current = stored && this.live(stored, now) ? stored : undefined;
    const countFrom = current ? Math.min(current.countFrom, activity.at) : activity.at;
    // Fields of the latest action come from the newest one: late delivery never moves them back.
    // lastUpdate is the newest delivered action's time, never below where a removal left it: an
    // action a removal already named (newer than lastUpdate, counted but never delivered to this
    // record since it was made) still moves the record when it is delivered.
    const lastUpdate = Math.max(activity.at, current?.lastUpdate ?? activity.at);
    const source =
      !current ||
      newer(
        { at: activity.at, actionId: activity.lastActionId },
        { at: current.lastActionAt, actionId: current.lastActionId },
      )
        ? { ...activity, lastUpdate, lastActionAt: activity.at }
        : { ...current, lastUpdate };
    const seen = this.seen(recipientId, activity, source, countFrom);
    if (current && sameSeen(seen, current)) return;
    // New activity makes a read record unread and unseen again and brings it back to the inbox; a
    // new record starts so.
    tray.set(key, {
      ...seen,
      hasRead: false,
      unreadAt: now,
      // Stamped after the stored record's, expired or not: a stream's catch-up never goes back.
      changedAt: this.stampOnce(recipientId, key, stored, now),
      ...reopened(),
      updateFloor: current?.updateFloor ?? 0,
    });
  }

  /** What the recipient sees of a record: its group's counted actors and the latest action's fields. */
  private seen(
    recipientId: string,
    identity: Pick<Activity, 'verb' | 'targetId' | 'targetType'>,
    source: Pick<
      ModelRecord,
      | 'targetName'
      | 'parentTargetId'
      | 'lastActionId'
      | 'lastActionSegmentNo'
      | 'feed'
      | 'mentionIn'
      | 'lastUpdate'
      | 'lastActionAt'
    >,
    countFrom: number,
  ): SeenRecord {
    const counted = this.counted(identity.verb, identity.targetId, recipientId, countFrom);
    return defined({
      key: encodeRecordKey({ verb: identity.verb, targetId: identity.targetId, userId: recipientId }),
      userId: recipientId,
      verb: identity.verb,
      targetId: identity.targetId,
      targetType: identity.targetType,
      targetName: source.targetName,
      parentTargetId: source.parentTargetId,
      lastActionId: source.lastActionId,
      lastActionSegmentNo: source.lastActionSegmentNo,
      feed: source.feed,
      mentionIn: source.mentionIn,
      actors: counted.slice(0, MAX_NAMED_ACTORS).map(snapshotOf),
      actorsCount: counted.length,
      countFrom,
      lastUpdate: source.lastUpdate,
      lastActionAt: source.lastActionAt,
    });
  }

  /**
   * A join processed late adds what falls in the span it opened (from the join to the next leave):
   * the community's posts and the actions on its targets addressed to the member (gated out while
   * they were away), no older than the retention and no more than a day ahead of the tray's clock.
   * The span is the one the leaves known when the join is processed leave it (joinLetsIn); a
   * leave processed after the join takes back nothing the join added.
   */
  private backfill(join: MembershipChange, now: number): void {
    const edges = this.edges(join.communityId, join.userId);
    const edge = edges.find((one) => one.joined && one.at === join.at);
    if (!edge) return;
    const oldest = now - this.retentionDays * DAY_MS;
    const inSpan = (action: Activity) =>
      action.at >= oldest &&
      action.at < now + DAY_MS &&
      joinLetsIn(edges, edge, action.at, this.processedOf(action));
    const posts = [...this.communityPosts(join.communityId).values()].filter(inSpan);
    const addressed = [...this.groups.values()].flatMap((group) =>
      [...group.values()].filter(
        (action) =>
          action.communityId === join.communityId &&
          action.audience.kind === 'user' &&
          action.audience.userId === join.userId &&
          inSpan(action),
      ),
    );
    for (const action of [...posts, ...addressed].sort((a, b) => a.at - b.at))
      this.deliver(join.userId, action, now);
  }

  /**
   * user.didDelete (docs/tray-rules.md#deleted-users): their own tray goes, their snapshots in
   * every group and record become `Deleted user` without images, marked deleted, and they leave, at the deletion's
   * time, every community they have a membership change in. From then on nothing reaches them and
   * their actions delivered later show them deleted (deliver, withDeletedActors).
   */
  private deleteProfile(userId: string, at: number, now: number): void {
    this.deleted.add(userId);
    this.trays.delete(userId);
    // What the user kept for themselves goes with their tray; others' mutes of them stay theirs.
    this.mutes.delete(userId);
    this.lastReads.delete(userId);
    for (const group of this.groups.values()) {
      for (const [key, action] of group)
        if (action.actor.userId === userId)
          group.set(key, { ...action, actor: { userId, name: DELETED_USER_NAME, deleted: true } });
    }
    for (const posts of this.posts.values()) {
      for (const [key, post] of posts)
        if (post.actor.userId === userId)
          posts.set(key, { ...post, actor: { userId, name: DELETED_USER_NAME, deleted: true } });
    }
    for (const [recipientId, tray] of this.trays) {
      for (const [key, record] of tray) {
        if (
          !record.actors.some(
            (actor) =>
              actor.userId === userId &&
              (actor.name !== DELETED_USER_NAME || actor.deleted !== true || actor.imageUrl),
          )
        )
          continue;
        record.actors = record.actors.map((actor) =>
          actor.userId === userId ? { userId, name: DELETED_USER_NAME, deleted: true, at: actor.at } : actor,
        );
        record.changedAt = this.stampOnce(recipientId, key, record, now);
      }
    }
    for (const [communityId, members] of this.members)
      if (members.has(userId)) this.addEdge(communityId, userId, { active: false, at });
  }
}

/** Applies a mark's change (if any) as a change of the record; answers whether there was one. */
function change(record: ModelRecord, changes: InboxChange | undefined, now: number): boolean {
  if (!changes) return false;
  Object.assign(record, changes, { changedAt: nextChangedAt(record.changedAt, now) });
  return true;
}

/** Whether every counted field (the recipient's view, countFrom, lastActionAt) is what the record has. */
function sameSeen(seen: SeenRecord, record: ModelRecord): boolean {
  const content = (value: SeenRecord | ModelRecord) => {
    const {
      hasRead: _hasRead,
      unreadAt: _unreadAt,
      changedAt: _changedAt,
      updateFloor: _floor,
      isSeen: _isSeen,
      archivedAt: _archivedAt,
      snoozedUntil: _snoozedUntil,
      ...rest
    } = value as ModelRecord;
    return rest;
  };
  return JSON.stringify(canonical(content(seen))) === JSON.stringify(canonical(content(record)));
}

/** Key order never decides equality. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, field]) => field !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([name, field]) => [name, canonical(field)]),
    );
  return value;
}

/** The model after every operation, in order. */
export function referenceTray(
  operations: Iterable<TrayOperation>,
  options: { retentionDays: number },
): ReferenceTray {
  const tray = new ReferenceTray(options);
  for (const operation of operations) tray.apply(operation);
  return tray;
}
