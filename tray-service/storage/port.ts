/**
 * The storage port: every operation the tray's use cases ask of storage, whole (a batch of
 * activities, a post's fan-out, a page, a count), so each adapter does it the way its engine does
 * best. Two adapters implement it: PostgreSQL (storage/postgres/, the default) and MongoDB
 * (storage/mongodb/). One conformance suite (test/tray-service/storage/conformance/) runs every
 * behaviour below against both. Whatever only one engine needs (version claims, locks,
 * retries on deadlock) stays inside its adapter and never appears in these types.
 *
 * Every query about a user's tray takes the user id as a required argument: no operation of this
 * port can read or change another user's records.
 */
import type { Activity, MembershipChange, ProfileChange } from '../domain/activity.ts';
import type { BanChange } from '../domain/ban-change.ts';
import type { PageKey } from '../domain/page-cursor.ts';
import type { TrayRecord, TrayVerb } from '../domain/tray-record.ts';
import type { StoredEvent, StoredEventStatus } from '../domain/stored-event.ts';
import type { DeliveryState, ModerationDecisionDoc } from '../domain/decision-doc.ts';
import type { ModerationAction } from '../domain/moderation-action.ts';
import type { EventsFilter } from '../domain/events-filter.ts';
import type { InboxRecord } from '../domain/inbox-record.ts';
import type { InboxView } from '../domain/inbox-view.ts';
import type { Mute } from '../domain/mute.ts';
import type { MuteTarget } from '../domain/mute-changes.ts';
import type { Removal } from '../domain/removal.ts';
import type { RemovalOutcome, RemovalTrayChange } from '../domain/removal-tray-change.ts';
import type { RecordPosition } from '../domain/page-cursor.ts';

export type StorageEngine = 'postgres' | 'mongodb';

/** What every write of the worker is told. */
export interface WriteContext {
  /** The tray's clock (epoch ms): unreadAt and changedAt of what this write changes. */
  now: number;
  /**
   * The tray's clock while the write runs. A write made of rounds (MongoDB's fan-out batches and
   * compare-and-set retries, which may take tens of seconds) stamps each round with the later of
   * `now` and this: a record that lands after the user's last-read call is unread, and its
   * `changedAt` stays within a stream's settle window of when it landed. Without it (tests pin
   * the time) every round takes `now`.
   */
  clock?: () => number;
  /** Days a record lives after its lastUpdate (TRAY_RETENTION_DAYS). */
  retentionDays: number;
  /**
   * Told of the records this write changed, as readers now see them (with their inbox state, as
   * v3 history shows them), after they are durable (live streams). Called in batches, so a fan-out
   * to many members never holds them all at once. Every record written is told, expired ones too
   * (a deleted user's name is rewritten there as well): what live streams hear is the caller's
   * decision (the apply-job use case), not the adapter's.
   */
  onWritten?: (records: readonly InboxRecord[]) => Promise<void>;
  /**
   * Told of the records this write deleted because it left them with no action (a removal, or a
   * leave that arrived after the actions it precedes), once durable.
   */
  onRemoved?: (records: readonly RemovedRecord[]) => Promise<void>;
}

/** What a removal is told besides what every write is. */
export interface RemovalContext extends WriteContext {
  /**
   * The stored event the removals came with: what they changed is recorded under its key, in the
   * same write (RemovalOutcomesPort). Without it nothing is recorded.
   */
  eventKey?: string;
}

/** A record a write removed: whose, and its key. */
export interface RemovedRecord {
  userId: string;
  key: string;
}

export interface HistoryPage {
  /** Newest first; records of equal lastUpdate are never split across two pages. */
  records: TrayRecord[];
  /** The next `startAfter`, or 0 on the last page. */
  nextPage: number;
}

/**
 * A record as a mark left it, and the changedAt of the state the mark changed: a live stream that
 * had not delivered that state sends the whole record, where one that had sends only the mark
 * (docs/live-tray.md).
 */
export type MarkedRecord<R extends TrayRecord = TrayRecord> = R & { changedBefore: number };

/**
 * Told part of a write's changes as soon as they are stored, by an adapter that writes in parts (a
 * mark of thousands, the snooze wake-up): each part reaches live streams within their settle
 * window of its stamp, where told at the end it would come past it. The write still returns every
 * record it changed, those told included (the same objects).
 */
export type TellStored<T> = (part: readonly T[]) => Promise<void>;

/** TellStored of a mark's records. */
export type TellMarked<R extends TrayRecord = TrayRecord> = TellStored<MarkedRecord<R>>;

/** A user's tray as the tray API and the live tray read and mark it. */
export interface TrayRecordsPort {
  /**
   * Unexpired records not marked read whose unreadAt is after `lastReadAt`; `'recorded'`: after
   * the user's recorded last-read time (lastRead), read by the same call, so the unread count the
   * API serves is one request to storage.
   */
  countUnread(userId: string, lastReadAt: number | 'recorded', now: number): Promise<number>;
  /** Unexpired records, without those of `excludeVerbs`. */
  count(userId: string, now: number, excludeVerbs?: readonly TrayVerb[]): Promise<number>;
  /** v3: records with lastUpdate below `startAfter` (all when undefined), newest first. */
  pageAfter(
    userId: string,
    startAfter: number | undefined,
    pageSize: number,
    now: number,
  ): Promise<HistoryPage>;
  /** v2: page `page` (1-based) of the same order, without `excludeVerbs`. */
  pageNumber(
    userId: string,
    page: number,
    pageSize: number,
    now: number,
    excludeVerbs: readonly TrayVerb[],
  ): Promise<TrayRecord[]>;
  /** Marks one record read. `found` is false when the user has no unexpired record of this verb and target. */
  markRead(
    userId: string,
    verb: TrayVerb,
    targetId: string,
    now: number,
  ): Promise<{ found: boolean; changed: MarkedRecord[] }>;
  /** Marks every unread record read; returns those it changed (some may be told first: TellMarked). */
  markAllRead(userId: string, now: number, tell?: TellMarked): Promise<MarkedRecord[]>;
  /** Deletes the user's whole tray; returns how many records went. */
  deleteAll(userId: string): Promise<number>;
  /**
   * Unexpired records whose changedAt is after `since`, oldest change first (then by key), with
   * their inbox state (a reconnecting stream: an archived or snoozed record must not read as one
   * back in the inbox). With `page`, at most `limit` of them, starting after `after`: a catch-up
   * reads a large backlog a page at a time.
   */
  changedSince(userId: string, since: number, now: number, page?: ChangesPage): Promise<InboxRecord[]>;
  /**
   * The user's unexpired records of these keys (others' and unknown keys are ignored), with their
   * inbox state: a live stream told of a removal sends a record stored again since instead.
   */
  byKeys(userId: string, keys: readonly string[], now: number): Promise<InboxRecord[]>;
}

/** One page of changedSince: the next one starts after the last record of the previous. */
export interface ChangesPage {
  after?: { changedAt: number; key: string };
  limit: number;
}

/** The worker's side of the tray: what a queue job changes. Every operation is idempotent. */
export interface TrayWritesPort {
  /**
   * Activities whose audience is one user (comments, replies, reactions, mentions): each action is
   * added to its target's actors and the recipient's record regrouped. Actions of the recipient
   * themselves are never notified.
   */
  applyPersonal(activities: readonly Activity[], context: WriteContext): Promise<void>;
  /**
   * Posts of one community, fanned out to the `post` record of everyone who was a member when
   * each post was created (membership by time), in as few statements as the engine allows.
   */
  fanOutPosts(communityId: string, posts: readonly Activity[], context: WriteContext): Promise<void>;
  /**
   * Joins and leaves. A join stored after posts of its community that fall inside the new
   * membership gives the member those posts too (a late join), so the order in which a join and
   * a post arrive never changes the result.
   */
  applyMemberships(changes: readonly MembershipChange[], context: WriteContext): Promise<void>;
  /**
   * Profile changes: a rename changes no record (names are snapshots); a delete rewrites the
   * user's snapshots to `Deleted user`, removes their own tray and ends their memberships. A
   * deletion is final (docs/tray-rules.md#deleted-users): no later change replaces it, and from
   * then on every write of this port leaves the user out of its recipients and names an action
   * of theirs as the deletion does, also a write running at the same moment.
   */
  applyProfiles(changes: readonly ProfileChange[], context: WriteContext): Promise<void>;
  /**
   * Removals (docs/tray-rules.md#inbox): each is kept as a tombstone; the actions it voids leave
   * every record that counted them, which is computed again from what it still counts (actors,
   * actorsCount, the last action), keeping its lastUpdate, read, seen, archive and snooze state,
   * or removed when nothing is left. A voided action arriving later is a no-op; a redelivered
   * removal changes nothing. With `eventKey`, what it changed is recorded under it (RemovalOutcomesPort):
   * counts added to any an earlier try recorded, and the first changes listed.
   */
  applyRemovals(removals: readonly Removal[], context: RemovalContext): Promise<void>;
}

/** One latest time per user, never moving backwards (last read, delete-all). */
export interface LatestTimesPort {
  /** 0 when none was recorded. */
  latest(userId: string): Promise<number>;
  record(userId: string, at: number): Promise<void>;
}

/**
 * Deleted users (docs/tray-rules.md#deleted-users). A deletion stores the profile first and only
 * then removes what the user kept for themselves (forgetKept's state): so a write of that state
 * that reads the profile after its own write (use-cases/unless-deleted.ts) either finds the
 * deletion and removes it itself, or wrote before the deletion's removal began.
 */
export interface DeletedUsersPort {
  /** Whether the user's deletion is stored. */
  isDeleted(userId: string): Promise<boolean>;
  /** Removes the users' mutes (ended spans too) and last-read times; idempotent. */
  forgetKept(userIds: readonly string[]): Promise<void>;
}

export interface BlockEntry {
  netid_uid: string;
  blocked_userId: string;
}

export interface BlockListPage {
  results: BlockEntry[];
  /** The last entry of this page, or null on the last page. */
  paginationToken: BlockEntry | null;
}

export interface BlockListPort {
  /**
   * Stores the entry unless it would be the owner's entry past `maxEntries` (none when absent):
   * 'full' then, and nothing changed. An entry already stored is 'blocked' whatever the count.
   * Blocks of one owner at once, from any number of processes, never take it past `maxEntries`.
   */
  block(netidUid: string, blockedUserId: string, maxEntries?: number): Promise<'blocked' | 'full'>;
  unblock(netidUid: string, blockedUserId: string): Promise<void>;
  /** Entries ordered by blocked user id, strictly after `afterBlockedUserId`. */
  page(netidUid: string, afterBlockedUserId: string | undefined, pageSize: number): Promise<BlockListPage>;
  /** Which of `userIds` the owner has blocked. */
  blockedAmong(netidUid: string, userIds: readonly string[]): Promise<Set<string>>;
  /** Removes every entry of the owner (a deleted user's list); others' entries naming them stay. */
  forget(netidUid: string): Promise<void>;
}

export interface BansPort {
  /** Keeps, per user, only the change of highest banRank (domain/ban-change.ts). */
  apply(changes: readonly BanChange[]): Promise<void>;
  /** The newest change of every user who was ever banned or unbanned. */
  all(): Promise<BanChange[]>;
}

export type { EventsFilter };

export interface EventsPage {
  items: StoredEvent[];
  /** Key of the last item when more may follow. */
  next?: PageKey;
}

/** What the mapping made of an event, stored with it. */
export interface EventOutcome {
  status: StoredEventStatus;
  error?: string;
  /** A community post: its community and createdAt (what a late join looks up). */
  communityPost?: { communityId: string; at: number; activity: Activity };
  /** The mapping's EventSubject: stored for the admin filters. */
  userId?: string;
  communityId?: string;
}

/** The events received in one minute, counted by name (the events-per-minute chart). */
export interface EventMinute {
  /** The minute's start (UTC). */
  minute: Date;
  /** Event name -> events of that name received in the minute (names without one are absent). */
  counts: Record<string, number>;
}

/** The lag histogram of the events received in one minute (acknowledgement to tray). */
export interface LagMinute {
  minute: Date;
  /** Events counted (applied ones). */
  count: number;
  /** Counts per bucket of domain/lag-histogram.ts (LAG_BUCKETS long). */
  buckets: number[];
  /** The largest lag (exact). */
  maxMs: number;
}

export interface EventsPort {
  /**
   * Stores a delivery once under its dedupe key: a redelivered or retried job changes nothing and
   * gets the event as first stored.
   */
  store(
    event: Omit<StoredEvent, 'storedAt' | 'expiresAt' | 'status' | 'error'>,
    outcome: EventOutcome,
    options: { retentionDays: number; now: Date },
  ): Promise<StoredEvent>;
  /**
   * Stores a replay's verdict of an event stored under one that applied nothing
   * (RESTATABLE_STATUSES): its status, error, acting user and community, and what a late join looks
   * up. Changes only an unexpired event still stored under such a verdict, so of replays racing one
   * verdict stands (they agree). Resolves the event as stored then; undefined when none is.
   */
  restate(key: string, outcome: EventOutcome, now: Date): Promise<StoredEvent | undefined>;
  /**
   * Newest first (receivedAt, then key), unexpired only, `limit` at most; with `maxBytes`, also no
   * more events than their payloads' stored sizes fit in it (one at least), so a page of large
   * payloads stays within it. Events stored by a release that kept no size count as the adapter
   * can tell (docs/storage.md).
   */
  list(
    filter: EventsFilter,
    limit: number,
    after?: PageKey,
    options?: { maxBytes?: number },
  ): Promise<EventsPage>;
  get(key: string): Promise<StoredEvent | undefined>;
  /**
   * Every match, newest first (strictly after `after`, when given), read in batches: memory stays
   * bounded however many match.
   */
  stream(filter: EventsFilter, after?: PageKey): AsyncIterable<StoredEvent>;
  /**
   * The matches (strictly after `after`, when given: what is left of a resumed export), counted up
   * to `atMost` when given: a caller that refuses more than a bound needs no count of a table of
   * hundreds of millions, which would outlast the statement timeout instead of being refused.
   */
  count(filter: EventsFilter, after?: PageKey, atMost?: number): Promise<number>;
  /**
   * Records when the worker finished applying a stored event. The first call per event counts its
   * lag (appliedAt - receivedAt) into its minute's histogram and resolves true; later calls (a
   * retried or replayed job) change nothing and resolve false, except those with the first
   * call's `by` (its maker: one job attempt), which resolve true again: a rerun of a call whose
   * answer was lost after its mark committed learns it made the mark.
   */
  markApplied(event: Pick<StoredEvent, 'key' | 'receivedAt'>, appliedAt: Date, by?: string): Promise<boolean>;
  /**
   * Events per minute of receipt, by name, for the minutes in [since, until) that have any, oldest
   * first: a rollup kept as events are stored (each stored event counted once), never a scan of the
   * events. A minute's counts live as long as its latest-expiring event, so an event that expired
   * before the others of its minute is still counted.
   */
  perMinute(since: Date, until: Date): Promise<EventMinute[]>;
  /** The lag histograms of the minutes in [since, until), oldest first, kept by markApplied. */
  lagPerMinute(since: Date, until: Date): Promise<LagMinute[]>;
}

export interface DecisionsFilter {
  rule?: string;
  action?: ModerationAction;
  userId?: string;
  eventKey?: string;
  /**
   * The decisions about one delivery of their event: a key stored anew after it expired (a
   * redelivery, a replay) keeps the earlier delivery's decisions until the purge.
   */
  eventReceivedAt?: Date;
  delivery?: DeliveryState;
  since?: Date;
  until?: Date;
}

export interface DecisionsPort {
  /**
   * Inserts decisions not stored yet; an existing one (same id) is left as it is, but for a later
   * `expiresAt`, which it takes (its event was stored anew: a redelivery of an expired one). Each
   * decided event's moderation outcome (StoredEvent.moderation) becomes the most severe action of
   * its decisions.
   */
  saveAll(decisions: readonly ModerationDecisionDoc[]): Promise<void>;
  /** Of these ids, those still waiting for delivery. */
  pendingAmong(ids: readonly string[]): Promise<string[]>;
  get(id: string): Promise<ModerationDecisionDoc | undefined>;
  /** Newest first (decidedAt, then id). */
  list(
    filter: DecisionsFilter,
    limit: number,
    after?: PageKey,
  ): Promise<{ items: ModerationDecisionDoc[]; next?: PageKey }>;
  markDelivered(id: string, attempts: number, at: Date): Promise<void>;
  /** Records a failed attempt; `final` when no retry is left. Never overrides a delivery that succeeded. */
  markAttemptFailed(id: string, attempts: number, error: string, final: boolean): Promise<void>;
}

/** One line of a membership import (npm run import-members): member since `since`. */
export interface ImportedMember {
  communityId: string;
  userId: string;
  since: number;
}

export interface MembersImportPort {
  /**
   * Adds memberships from the platform's own list: each member is one as of `asOf`, a join
   * processed before everything, kept beside every earlier list's (a leave stored after `asOf`
   * wins over the import, one before it does not, whenever it arrives). Counts: inserted, a member
   * new to the imports; updated, one imported before who had no list at `asOf`; unchanged, one
   * who had (the same list again). They add up to `members.length`: a member listed more than
   * once counts once more as unchanged for each repeat.
   */
  importBatch(
    members: readonly ImportedMember[],
    asOf: number,
  ): Promise<{ inserted: number; updated: number; unchanged: number }>;
}

/**
 * Whom an event's actions reached by membership, as the tray judged it: by the order it processed
 * joins, leaves and kept actions in (docs/tray-rules.md#leaving-and-rejoining-a-community), each
 * action at the place it took when first kept (one no longer kept, as processed after every
 * change: its members by the dates alone).
 */
export interface CommunityMembersPort {
  /**
   * Which of `userIds` the community post `post` of `communityId` reached as members (memberFor
   * at its place; never its author, nor a user whose profile is deleted; mutes are not judged here).
   */
  reachedAmong(communityId: string, post: Activity, userIds: readonly string[]): Promise<Set<string>>;
  /**
   * For each of `activities`, whether it is an action addressed to one user that reached them in
   * no way whatever their mutes: their profile is deleted, or it is on a community's target that
   * they were away from when it was processed (awayFor at its place: they had left and not joined
   * again, by the changes processed before it). False for every other activity. A user the tray
   * knows no join or leave of is never away.
   */
  notReached(activities: readonly Activity[]): Promise<boolean[]>;
  /**
   * The users the community post's `post` record reached: members of `communityId` for the post
   * (reachedAmong: never its author, nor a deleted user) and those whose mute in force then covered it (domain/mute.ts
   * heldBackByMutes: of the community, the post or its author), in id order (byte order), after
   * `after`. Members and mutes are read in whole statements, never one per member.
   */
  postRecipients(
    communityId: string,
    post: Activity,
    page: { limit: number; after?: string },
  ): Promise<{ userIds: string[]; next?: string }>;
  /** How many users postRecipients lists in all: exact, counted without a cap. */
  countPostRecipients(communityId: string, post: Activity): Promise<number>;
  /**
   * The mute spans of `userIds` on `targets` (domain/mute.ts muteTargetsCovering), ended ones
   * included: what judges whether a mute held an action back from a few personal recipients.
   */
  muteSpansOn(userIds: readonly string[], targets: readonly MuteTarget[]): Promise<Mute[]>;
}

/** A page of one of the inbox's views (docs/tray-rules.md#inbox): paged as HistoryPage. */
export interface InboxPage {
  records: InboxRecord[];
  nextPage: number;
}

/** Record keys (1-100 of the caller's; others, unknown and expired ones are ignored) or `all` of the inbox. */
export type MarkedRecords = readonly string[] | 'all';

/** One inbox mark of a user's records (domain/seen-mark.ts, archive-mark.ts, snooze-mark.ts). */
export type InboxMark =
  | { kind: 'seen'; ids: MarkedRecords }
  /** `readOnly` with `all`: only records marked read. */
  | { kind: 'archive'; ids: MarkedRecords; readOnly?: boolean }
  | { kind: 'unarchive'; ids: readonly string[] }
  | { kind: 'snooze'; ids: readonly string[]; until: number }
  | { kind: 'unsnooze'; ids: readonly string[] };

/**
 * The inbox extensions of a user's tray (docs/tray-rules.md#inbox): views, the unseen count, marks,
 * snooze wake-ups and mutes, each a whole operation (one statement per mark, never a
 * loop over a user's records or a post's audience). "In the inbox" is stored state, so both counts
 * stay single indexed statements without a clock comparison.
 */
/** A user's unread and unseen counts of the inbox. */
export interface InboxCountPair {
  unread: number;
  unseen: number;
  /**
   * When the first record either count counted expires (epoch ms, after `now`), absent when they
   * counted none: the counts change then without any write, and the live streams count again. An
   * adapter may name an earlier time (what it reads ahead is bounded), never a later one: counted
   * again then, the counts are the same and name the next time.
   */
  nextExpiry?: number;
}

export interface InboxPort {
  /** A page of `view` (v3 paging: records of lastUpdate below `startAfter`, newest first). */
  page(
    userId: string,
    view: InboxView,
    startAfter: number | undefined,
    pageSize: number,
    now: number,
  ): Promise<InboxPage>;
  /** Unexpired inbox records not seen. */
  countUnseen(userId: string, now: number): Promise<number>;
  /**
   * Both inbox counts (countUnread with the recorded last-read time, and countUnseen) of each of
   * `userIds` (each once; users with no record count 0), in a bounded number of round trips
   * whatever their number: the live streams recount every user a snooze wake-up touched.
   */
  countInboxes(userIds: readonly string[], now: number): Promise<Map<string, InboxCountPair>>;
  /** Unexpired records of `view` (a history page's `totalPages`). */
  countView(userId: string, view: InboxView, now: number): Promise<number>;
  /**
   * Applies the mark at `now`; returns the records it changed (their count is `updated`), some of
   * which may be told first (TellMarked).
   */
  mark(
    userId: string,
    mark: InboxMark,
    now: number,
    tell?: TellMarked<InboxRecord>,
  ): Promise<MarkedRecord<InboxRecord>[]>;
  /**
   * v2/last-read at `now` sees the records it stops counting as unread (domain/seen-mark.ts
   * seenByLastRead); like the last-read time, no change for streams. Returns how many.
   */
  seeThrough(userId: string, now: number): Promise<number>;
  /**
   * The wake-up: claims up to `limit` records whose snooze has ended by `now` and brings them back
   * (domain/snooze-mark.ts wake), each once however many tray processes claim at the same time.
   * A record that expired while snoozed is not woken: like every expired record it is never
   * changed, counted or announced again, only purged. Returns the woken records; fewer than `limit`
   * when no more are due. A failure after some woke is a PartialWriteError carrying them. An
   * adapter that wakes them in parts may tell each part once stored (TellStored).
   */
  wakeDue(now: number, limit: number, tell?: TellStored<InboxRecord>): Promise<InboxRecord[]>;
  /**
   * PUT a mute (domain/mute-changes.ts putMute); returns the mute in force. Ended spans are kept
   * `retentionDays` after their end. A PUT that would start a new span while `maxInForce` of the
   * user's mutes are in force changes nothing and answers 'too many' (a PUT of a target in force
   * never does). The count and the write are one step per user: PUTs of one user's mutes at once,
   * from any number of processes, never take it past `maxInForce`. Likewise a new span when
   * `maxSpansPerTarget` spans of the user's of this target are in force or ended within the
   * retention answers 'too many spans': every delivery to the target reads them; and one when
   * `maxSpansPerUser` of the user's spans of any targets are, 'too many user spans': every delivery
   * to the user reads them (both unbounded by default).
   */
  putMute(
    userId: string,
    target: MuteTarget,
    until: number | null,
    now: number,
    retentionDays: number,
    maxInForce: number,
    maxSpansPerTarget?: number,
    maxSpansPerUser?: number,
  ): Promise<Mute | 'too many' | 'too many spans' | 'too many user spans'>;
  /**
   * DELETE a mute: whether one was in force (domain/mute-changes.ts removeMute). One step against
   * the user's PUTs: a PUT of the target at once never undoes the removal it answered.
   */
  removeMute(userId: string, target: MuteTarget, now: number, retentionDays: number): Promise<boolean>;
  /** The user's mutes in force at `now`, oldest first. */
  mutesInForce(userId: string, now: number): Promise<Mute[]>;
}

/** Which trays a removal event changed, recorded when the worker applied it (domain/removal-tray-change.ts). */
export interface RemovalOutcomesPort {
  /** Undefined when nothing was recorded under the event's key (not applied, or before recording). */
  outcome(eventKey: string): Promise<RemovalOutcome | undefined>;
  /** The listed changes in (user, key) order, after `after`. */
  changes(
    eventKey: string,
    limit: number,
    after?: RecordPosition,
  ): Promise<{ items: RemovalTrayChange[]; next?: RecordPosition }>;
}

export interface TrayStorage {
  readonly engine: StorageEngine;
  readonly records: TrayRecordsPort;
  readonly writes: TrayWritesPort;
  readonly lastRead: LatestTimesPort;
  readonly clears: LatestTimesPort;
  readonly blockList: BlockListPort;
  readonly deletedUsers: DeletedUsersPort;
  readonly bans: BansPort;
  readonly events: EventsPort;
  readonly decisions: DecisionsPort;
  readonly members: MembersImportPort;
  readonly communityMembers: CommunityMembersPort;
  /**
   * The inbox extensions (docs/tray-rules.md#inbox). Both adapters have them; an adapter without
   * them (a new engine's first steps) still serves the platform's tray, and the use cases answer
   * 501 to the inbox calls.
   */
  readonly inbox?: InboxPort;
  /** What removal events changed. */
  readonly removalOutcomes: RemovalOutcomesPort;
  /**
   * Deletes expired records and events now (readers already skip them); returns how many went.
   * The events' moderation decisions go with them (each carries its event's expiry), except those
   * still `pending` delivery, which stay until delivered or given up.
   * The PostgreSQL adapter purges every table past one that fails, then throws a PurgeError
   * (purge-error.ts) naming each table that failed.
   */
  purgeExpired(now: Date): Promise<{ records: number; events: number }>;
  /** Throws when the server does not answer (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A write of several records that failed after it had changed some. MongoDB's adapter writes
 * records one compare-and-set at a time, so a mark of many can stop part-way (a record held by a
 * writer that died, the connection lost) with the first records changed for good; PostgreSQL
 * writes them in one statement and never throws this. `changed` holds what the write would have
 * returned for those; `cause` is the failure, which is the call's.
 */
export class PartialWriteError<T> extends Error {
  readonly changed: readonly T[];

  constructor(changed: readonly T[], cause: unknown) {
    super(`the write failed after it changed ${changed.length} records`, { cause });
    this.name = 'PartialWriteError';
    this.changed = changed;
  }
}
