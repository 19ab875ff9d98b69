import type { BanChange } from './ban-change.ts';
import type { Removal } from './removal.ts';
import { encodeRecordKey } from './record-key.ts';
import type { TrayRecord, TrayVerb } from './tray-record.ts';

/** A user as the event showed them when they acted (a later rename does not change it). */
export interface ActorInfo {
  userId: string;
  name: string;
  imageUrl?: string;
  avatarCustomUrl?: string;
  /**
   * Set only on a deleted user (deletedActor): what tells a deleted user from a live one whose
   * display name happens to read `Deleted user`, so messages can name them in the reader's language.
   */
  deleted?: true;
}

/**
 * Who an activity is for: one user (post owner, comment owner, mentioned user), or every current
 * member of a community (a community post, fanned out by the store).
 */
export type Audience = { kind: 'user'; userId: string } | { kind: 'community'; communityId: string };

/**
 * One action's contribution to the record(s) of its audience; produced only by mapEvent. The
 * record-level fields are the record's own (lastActionId, a post, comment or reaction id, is also
 * what makes re-applying the same action a no-op).
 */
export interface Activity extends Pick<
  TrayRecord,
  | 'verb'
  | 'targetId'
  | 'targetType'
  | 'targetName'
  | 'parentTargetId'
  | 'lastActionId'
  | 'lastActionSegmentNo'
  | 'feed'
  | 'mentionIn'
> {
  actor: ActorInfo;
  /** Epoch ms the action happened (the payload's createdAt). */
  at: number;
  audience: Audience;
  /**
   * The community the action's target belongs to: a post in a community, a comment, reply or
   * reaction on such a post or its comments, a mention in them. Absent for user-feed targets. A
   * member who left a community gets nothing of its targets while away
   * (docs/tray-rules.md#leaving-and-rejoining-a-community).
   */
  communityId?: string;
}

/** community.didJoin / didLeave for one user; `at` is the event's createdAt, else the job's receivedAt. */
export interface MembershipChange {
  communityId: string;
  userId: string;
  active: boolean;
  at: number;
}

/** user.didUpdate / user.didDelete for one user. */
export interface ProfileChange {
  userId: string;
  displayName: string;
  imageUrl?: string;
  avatarCustomUrl?: string;
  deleted: boolean;
  at: number;
}

/**
 * Who acted and where, as the admin filters find an event (docs/operations.md#stored-events):
 * `userId` is the acting user when the event names exactly one (a post's, comment's or reaction's
 * author; the one user who joined, left, changed or was banned), `communityId` the community it
 * happened in. Stored with the event.
 */
export interface EventSubject {
  userId?: string;
  communityId?: string;
}

/** What an event means for the tray; `status` is stored with the event. */
export interface MappedEvent {
  status: 'applied' | 'stored' | 'unknown' | 'invalid';
  error?: string;
  activities: Activity[];
  memberships: MembershipChange[];
  profiles: ProfileChange[];
  /** user.didGlobalBan / didGlobalUnban; absent for every other event. */
  bans?: BanChange[];
  /** post.didDelete, comment.didDelete, reaction.didRemove; absent for every other event. */
  removals?: Removal[];
  /** Absent for events the mapping does not read (unknown, store-only, invalid). */
  subject?: EventSubject;
}

/**
 * The stable record key v_tarid_uid (docs/contract.md#tray-records), each part escaped so that ids
 * containing `_` never make two users' records one (record-key.ts).
 */
export function recordKey(verb: TrayVerb, targetId: string, userId: string): string {
  return encodeRecordKey({ verb, targetId, userId });
}

/** The display name of a deleted user (docs/contract.md#userdidupdate-userdiddelete). */
export const DELETED_USER_NAME = 'Deleted user';
