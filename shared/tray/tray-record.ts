/**
 * Stored shapes of the tray, shared by the worker (writes) and the API (reads).
 * The public NotificationRecord (docs/contract.md#tray-records) is derived from TrayRecordDoc by the API.
 */

export const TRAY_RECORDS = 'tray_records';
export const MEMBERSHIPS = 'community_members';
export const USER_PROFILES = 'user_profiles';
export const EVENTS = 'events';
/** Internal (worker only): write claims that make compare-and-set safe on FerretDB (claim-versions.ts). */
export const TRAY_RECORD_CLAIMS = 'tray_record_claims';
/** Internal (worker only): the distinct actors of each record group, kept once per target (target-actors-store.ts). */
export const TRAY_TARGET_ACTORS = 'tray_target_actors';

/** Record verbs: the four of section 4.1 plus the mention verbs of section 2.3 (v3 only). */
export const trayVerbs = ['post', 'comment', 'reaction', 'mentreply', 'mention', 'mentreact'] as const;
export type TrayVerb = (typeof trayVerbs)[number];

/** An actor as they were when they acted (later renames do not change it). */
export interface ActorSnapshot {
  userId: string;
  name: string;
  imageUrl?: string;
  avatarCustomUrl?: string;
  /** Epoch ms of this actor's latest activity on the record. */
  at: number;
}

/** Where the activity happened; decides the message shape (community feed vs user feed). */
export type FeedRef =
  | { kind: 'community'; id: string; name: string }
  /** A user feed; `name` is the feed owner's display name ("... in Ana feed"). */
  | { kind: 'user'; id: string; name: string };

/** One actor's latest action on a record group (tray_target_actors), what grouping is computed from. */
export interface ActorAction {
  actor: Omit<ActorSnapshot, 'at'>;
  /** Epoch ms of the action (the payload's createdAt). */
  at: number;
  /** Id of that action (post, comment or reaction id); breaks ties between equal times. */
  actionId: string;
}
/**
 * Written only by the tray worker (tray-service/worker). Field decisions (docs/tray-engine.md):
 * - `imageUrl` / `avatarCustomUrl` of the public record are those of `actors[0]` (the latest actor).
 * - `targetName` is the feed's name for every verb: the community's display name, or on a user
 *   feed the feed owner's display name (payloads carry no post title).
 * - A deleted user's snapshots in `actors` are rewritten to `Deleted user`; a plain rename never
 *   changes stored snapshots (docs/contract.md#userdidupdate-userdiddelete).
 */
export interface TrayRecordDoc {
  /**
   * v_tarid_uid: `${verb}_${targetId}_${userId}`, each part with `%` and `_` escaped (docs/contract.md#tray-records);
   * for mentions the target is the mentioning post/comment.
   */
  _id: string;
  /** The recipient. */
  userId: string;
  verb: TrayVerb;
  targetId: string;
  targetType: 'community' | 'post';
  targetName: string;
  parentTargetId?: string;
  lastActionId: string;
  lastActionSegmentNo?: number;
  feed: FeedRef;
  /** For `mention` records: whether the mention was in a post or a comment. */
  mentionIn?: 'post' | 'comment';
  /** Latest distinct actors, newest first, at most 3. */
  actors: ActorSnapshot[];
  /** Number of distinct actors who acted at or after `countFrom`, the recipient excluded. */
  actorsCount: number;
  /**
   * The earliest action this record has counted. Actors whose latest action is older are not its
   * actors: a record re-created after delete-all or expiry, or a member's record for a community
   * they joined later, starts counting afresh.
   */
  countFrom: number;
  /** Epoch ms of the newest activity (platform time; display and order); never moves backwards. */
  lastUpdate: number;
  hasRead: boolean;
  /**
   * Epoch ms on the tray's own clock of the last change that made the record unread: what the
   * unread count compares with the last-read time, so an activity delivered late is still unread.
   */
  unreadAt: number;
  /** recordGroup(verb, targetId): every recipient's record of one target, read by equality in a fan-out. */
  group: string;
  /** lastUpdate + TRAY_RETENTION_DAYS; TTL index where supported, purge + read filter everywhere. */
  expiresAt: Date;
  /**
   * Compare-and-set counter. Every write to an existing record, the worker's and the API's
   * (marking read), goes through casUpdateRecords: it claims `${_id}#${nextVersion}` in
   * tray_record_claims, then writes filtered on `version`, so concurrent writers never undo each
   * other, also on FerretDB whose updates are not atomic. A new record starts at its creation time
   * on the tray's clock, so a record re-created under the same `_id` never meets a claim of its
   * previous life.
   */
  version: number;
  /**
   * Epoch ms on the clock of the process that wrote it: when this state of the record was written.
   * casUpdateRecords stamps it on every insert and update, so a live stream that reconnects finds
   * "records changed since" by the user's records (docs/live-tray.md). Absent on records written
   * before live streams existed: they count as changed at 0.
   */
  changedAt?: number;
}

/**
 * community_members: one imported membership per (community, user) (`npm run import-members`); the
 * worker stores joins and leaves as change documents (community_member_changes) and reads both.
 */
export interface MembershipDoc {
  /** membershipId(communityId, userId) */
  _id: string;
  communityId: string;
  userId: string;
  active: boolean;
  /** Epoch ms of the latest join; posts created before it are not fanned out to this member. */
  since: number;
  /** Epoch ms of the latest join/leave applied; older join/leave deliveries are ignored. */
  updatedAt: number;
}

/** The key of a community's posts of one UTC day in `events`: JSON keeps the two parts apart. */
export function communityDay(communityId: string, day: string): string {
  return JSON.stringify([communityId, day]);
}

export function membershipId(communityId: string, userId: string): string {
  // JSON keeps the two ids apart whatever characters they contain.
  return JSON.stringify([communityId, userId]);
}

/** events: every verified delivery, for moderation and analytics (the admin API reads it). */
export interface StoredEventDoc {
  /** The receiver's dedupe key (lowercase hex SHA-256 of the raw body). */
  _id: string;
  event: string;
  data: Record<string, unknown>;
  webhook: string;
  receivedAt: Date;
  storedAt: Date;
  /** receivedAt + EVENTS_RETENTION_DAYS. */
  expiresAt: Date;
  /** `unknown`: a name the mapping does not know; `invalid`: known name, payload failed validation. */
  status: 'applied' | 'stored' | 'unknown' | 'invalid';
  error?: string;
  /**
   * On a community post: communityDay(community, UTC day of the post's createdAt), at top level so a
   * join processed late finds the posts it must add by equality, one day at a time
   * (backfill-join.ts), and `activityAt`, the post's createdAt (epoch ms). A bucket key the
   * MongoDB adapter keeps: every stored post event carries it, so a range on (community,
   * createdAt) instead would leave a late join blind to the posts stored before such a change
   * until a migration rewrote them; by day, a join reads one or two indexed equalities.
   */
  communityDay?: string;
  activityAt?: number;
}
