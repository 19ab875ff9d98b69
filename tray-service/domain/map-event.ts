import type { z } from 'zod';
import { DELETED_USER_NAME, type Activity, type EventSubject, type MappedEvent } from './activity.ts';
import {
  commentDidCreate,
  commentDidDelete,
  communityMembership,
  postDidCreate,
  postDidDelete,
  reactionDidAdd,
  reactionDidRemove,
  userDidDelete,
  userDidUpdate,
  userGlobalBan,
} from './event-schemas.ts';
import {
  mapComment,
  mapCommentDelete,
  mapPost,
  mapPostDelete,
  mapReaction,
  mapReactionRemove,
} from './map-social-events.ts';
import type { Removal } from './removal.ts';
import { nameOrId } from './display-name.ts';
import { eventTime } from './event-time.ts';
import { PayloadError } from '../../shared/errors/payload-error.ts';

/** Known events that are kept for moderation and analytics but change no record (docs/contract.md#events-that-are-only-stored). */
const storeOnly = new Set(['channel.didCreate', 'follow.didCreate', 'follow.didRequest', 'post.didFlag']);

export interface Envelope {
  event: string;
  data: Record<string, unknown>;
  /** Epoch ms the receiver accepted the delivery: the time of profile events, and of joins and leaves without createdAt. */
  receivedAt: number;
  /**
   * Epoch ms the event as first stored was received, when this delivery is a later one (the
   * platform's again, past the dedupe window): a date past its receipt counts from that first one
   * (eventTime), so every delivery dates it alike. An event without a date of its own still
   * counts from this delivery's receipt.
   */
  firstReceivedAt?: number;
}

const none = { activities: [], memberships: [], profiles: [] };

/**
 * The one place that knows event names and payload paths (docs/contract.md#event-catalogue). A platform
 * that sends other names or shapes is adapted here. Never throws: an unknown name or an invalid
 * payload is a status, so the job completes instead of being retried forever.
 */
export function mapEvent(envelope: Envelope): MappedEvent {
  const anchor = envelope.firstReceivedAt ?? envelope.receivedAt;
  return believableDates(mapPayload(envelope, anchor), anchor);
}

/**
 * `anchor`: the receipt a date of the payload's own is believed against (eventTime). A change
 * without one is dated by this delivery's receipt instead, as it is.
 */
function mapPayload(envelope: Envelope, anchor: number): MappedEvent {
  const { event, data, receivedAt } = envelope;
  const own = (at: number | null | undefined) => (at == null ? receivedAt : eventTime(at, anchor));
  switch (event) {
    case 'post.didCreate':
      return parsed(postDidCreate, data, (payload) =>
        activities(mapPost(payload), subject(payload.post.postedUserId, payload.post, payload.community)),
      );
    case 'comment.didCreate':
      return parsed(commentDidCreate, data, (payload) =>
        activities(mapComment(payload), subject(payload.comment.userId, payload.post, payload.community)),
      );
    case 'reaction.didAdd':
      return parsed(reactionDidAdd, data, (payload) =>
        activities(mapReaction(payload), subject(payload.reaction.userId, payload.post, payload.community)),
      );
    // Removals undo actions whoever they reached (docs/tray-rules.md#inbox).
    case 'post.didDelete':
      return parsed(postDidDelete, data, (payload) =>
        removals(mapPostDelete(payload), subject(payload.post.postedUserId, payload.post, payload.community)),
      );
    case 'comment.didDelete':
      return parsed(commentDidDelete, data, (payload) =>
        removals(mapCommentDelete(payload), subject(payload.comment.userId, payload.post, payload.community)),
      );
    case 'reaction.didRemove':
      return parsed(reactionDidRemove, data, (payload) =>
        removals(
          mapReactionRemove(payload),
          subject(payload.reaction.userId, payload.post, payload.community),
        ),
      );
    case 'community.didJoin':
    case 'community.didLeave':
      return parsed(communityMembership, data, (payload) => {
        // Without createdAt (older platforms) the change counts from its receipt.
        const at = own(payload.createdAt);
        return {
          ...none,
          status: 'applied',
          subject: { ...onlyOne(payload.userIds), communityId: payload.community.communityId },
          memberships: [...new Set(payload.userIds)].map((userId) => ({
            communityId: payload.community.communityId,
            userId,
            active: event === 'community.didJoin',
            at,
          })),
        };
      });
    case 'user.didUpdate':
      return parsed(userDidUpdate, data, (payload) => ({
        ...none,
        status: 'applied',
        subject: onlyOne(payload.users.map((user) => user.userId)),
        profiles: payload.users.map((user) => ({
          userId: user.userId,
          displayName: nameOrId(user.displayName, user.userId),
          ...(user.avatarFileUrl ? { imageUrl: user.avatarFileUrl } : {}),
          ...(user.avatarCustomUrl ? { avatarCustomUrl: user.avatarCustomUrl } : {}),
          deleted: false,
          // Storage keeps the newest profile by it: a late retry of an older rename must not win.
          at: own(payload.createdAt),
        })),
      }));
    case 'user.didDelete':
      return parsed(userDidDelete, data, (payload) => {
        const userIds = [...(payload.users ?? []).map((user) => user.userId), ...(payload.userIds ?? [])];
        return {
          ...none,
          status: 'applied',
          subject: onlyOne(userIds),
          profiles: [...new Set(userIds)].map((userId) => ({
            userId,
            displayName: DELETED_USER_NAME,
            deleted: true,
            at: receivedAt,
          })),
        };
      });
    case 'user.didGlobalBan':
    case 'user.didGlobalUnban':
      // A ban changes who may authenticate, nothing else: records, posts and memberships stay.
      return parsed(userGlobalBan, data, (payload) => ({
        ...none,
        status: 'applied',
        subject: onlyOne(payload.userIds),
        bans: [...new Set(payload.userIds)].map((userId) => ({
          userId,
          banned: event === 'user.didGlobalBan',
          at: own(payload.createdAt),
        })),
      }));
    default:
      return { ...none, status: storeOnly.has(event) ? 'stored' : 'unknown' };
  }
}

/**
 * The activities' and removals' times as eventTime believes them against `anchor` (each is a date
 * of the payload's own; joins, leaves, profiles and bans are believed as they are mapped).
 */
function believableDates(mapped: MappedEvent, anchor: number): MappedEvent {
  const believed = <T extends { at: number }>(change: T): T => {
    const at = eventTime(change.at, anchor);
    return at === change.at ? change : { ...change, at };
  };
  return {
    ...mapped,
    activities: mapped.activities.map(believed),
    ...(mapped.removals ? { removals: mapped.removals.map(believed) } : {}),
  };
}

function activities(list: Activity[], who: EventSubject): MappedEvent {
  return { ...none, status: 'applied', activities: list, subject: who };
}

function removals(list: Removal[], who: EventSubject): MappedEvent {
  return { ...none, status: 'applied', removals: list, subject: who };
}

/** The author, and the community when the post is in one (a user feed is no community). */
function subject(
  userId: string,
  post: { targetType: 'community' | 'user' },
  community: { communityId: string } | null | undefined,
): EventSubject {
  return post.targetType === 'community' && community
    ? { userId, communityId: community.communityId }
    : { userId };
}

/** The acting user of an event about several users is none of them: only one user makes one. */
function onlyOne(userIds: readonly string[]): EventSubject {
  const distinct = [...new Set(userIds)];
  return distinct.length === 1 && distinct[0] !== undefined ? { userId: distinct[0] } : {};
}

function parsed<S extends z.ZodType>(
  schema: S,
  data: unknown,
  map: (payload: z.infer<S>) => MappedEvent,
): MappedEvent {
  const result = schema.safeParse(data);
  if (!result.success) return { ...none, status: 'invalid', error: describeIssues(result.error) };
  try {
    return map(result.data);
  } catch (error) {
    // Cross-field rules (a reply without parentComment, ...) are checked while mapping.
    if (error instanceof PayloadError) return { ...none, status: 'invalid', error: error.message };
    throw error;
  }
}

function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `data.${issue.path.join('.')}: ${issue.message}`).join('; ');
}
