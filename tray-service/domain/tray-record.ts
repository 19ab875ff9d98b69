import type { ActorSnapshot } from './actor-snapshot.ts';
import type { FeedRef } from './feed-ref.ts';
import type { TrayVerb } from './tray-verb.ts';

export type { ActorSnapshot, FeedRef, TrayVerb };

/**
 * A tray record as readers see it (the tray API, the live tray, messages): what the contract's
 * NotificationRecord is derived from. It carries no storage mechanics (no claim versions, group
 * keys or expiry dates): each storage adapter keeps those to itself and returns this shape.
 */
export interface TrayRecord {
  /** v_tarid_uid: encodeRecordKey({ verb, targetId, userId }) (record-key.ts). */
  key: string;
  /** The recipient. */
  userId: string;
  verb: TrayVerb;
  /** For mentions, the mentioning post or comment. */
  targetId: string;
  targetType: 'community' | 'post';
  /**
   * The feed's name for every verb: the community's display name, or on a user feed the feed
   * owner's display name (payloads carry no post title).
   */
  targetName: string;
  parentTargetId?: string;
  lastActionId: string;
  lastActionSegmentNo?: number;
  feed: FeedRef;
  /** For `mention` records: whether the mention was in a post or a comment. */
  mentionIn?: 'post' | 'comment';
  /**
   * Latest distinct actors, newest first, at most 3. The public record's `imageUrl` and
   * `avatarCustomUrl` are those of `actors[0]`; a deleted user's snapshots read `Deleted user`, a
   * plain rename never changes them (docs/contract.md#userdidupdate-userdiddelete).
   */
  actors: ActorSnapshot[];
  /** Number of distinct actors the record counts, the recipient excluded (docs/tray-rules.md). */
  actorsCount: number;
  /** Epoch ms of the newest activity (platform time; display and order); never moves backwards. */
  lastUpdate: number;
  hasRead: boolean;
  /**
   * Epoch ms on the tray's own clock of the last change that made the record unread: what the
   * unread count compares with the last-read time, so an activity delivered late is still unread.
   */
  unreadAt: number;
  /** Epoch ms on the tray's clock of this state's write: what a reconnecting stream asks for. */
  changedAt: number;
}
