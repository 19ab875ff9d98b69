import type { Activity, ActorInfo } from '../../tray-service/domain/activity.ts';

/**
 * Activities as the event mapping makes them (docs/contract.md#record-fields-per-verb), one builder
 * per verb, so storage tests write activities without payloads. Every action happens in the
 * community `c-hike` ("Hiking Club") unless told otherwise (another community, or a user's feed).
 */

export interface ActionOptions {
  /** The action's id (post, comment or reaction id): what makes a redelivery a no-op. */
  id: string;
  at: number;
  /** The actor's display name; the user id when absent. */
  name?: string;
  imageUrl?: string;
  communityId?: string;
  /** On this user's feed instead of a community (not for posts: a user-feed post makes no `post` record). */
  userFeed?: string;
}

const COMMUNITY_NAME = 'Hiking Club';

function actorOf(userId: string, options: ActionOptions): ActorInfo {
  return {
    userId,
    name: options.name ?? userId,
    ...(options.imageUrl === undefined ? {} : { imageUrl: options.imageUrl }),
  };
}

function feedOf(options: ActionOptions): Activity['feed'] {
  if (options.userFeed !== undefined) return { kind: 'user', id: options.userFeed, name: options.userFeed };
  return { kind: 'community', id: options.communityId ?? 'c-hike', name: COMMUNITY_NAME };
}

/** The community of the action's target, as the mapping sets it (none on a user feed). */
function scopeOf(feed: Activity['feed']): { communityId?: string } {
  return feed.kind === 'community' ? { communityId: feed.id } : {};
}

/** A post into a community: a `post` record for each member at `at`. */
export function aPost(author: string, options: Omit<ActionOptions, 'userFeed'>): Activity {
  const feed = feedOf(options);
  return {
    verb: 'post',
    targetType: 'community',
    targetId: feed.id,
    targetName: feed.name,
    lastActionId: options.id,
    feed,
    ...scopeOf(feed),
    actor: actorOf(author, options),
    at: options.at,
    audience: { kind: 'community', communityId: feed.id },
  };
}

/** A top-level comment on `postId`, for the post's author. */
export function aComment(
  actor: string,
  post: { postId: string; owner: string },
  options: ActionOptions & { segment?: number },
): Activity {
  const feed = feedOf(options);
  return {
    verb: 'comment',
    targetType: 'post',
    targetId: post.postId,
    targetName: feed.name,
    parentTargetId: feed.id,
    lastActionId: options.id,
    ...(options.segment === undefined ? {} : { lastActionSegmentNo: options.segment }),
    feed,
    ...scopeOf(feed),
    actor: actorOf(actor, options),
    at: options.at,
    audience: { kind: 'user', userId: post.owner },
  };
}

/** A reply to `commentId` (on `postId`), for the parent comment's author. */
export function aReply(
  actor: string,
  parent: { commentId: string; owner: string; postId: string },
  options: ActionOptions & { segment?: number },
): Activity {
  const feed = feedOf(options);
  return {
    verb: 'mentreply',
    targetType: 'post',
    targetId: parent.commentId,
    targetName: feed.name,
    parentTargetId: parent.postId,
    lastActionId: options.id,
    ...(options.segment === undefined ? {} : { lastActionSegmentNo: options.segment }),
    feed,
    ...scopeOf(feed),
    actor: actorOf(actor, options),
    at: options.at,
    audience: { kind: 'user', userId: parent.owner },
  };
}

/** A reaction on a post (`reaction`, for its author). */
export function aReaction(
  actor: string,
  post: { postId: string; owner: string },
  options: ActionOptions,
): Activity {
  const feed = feedOf(options);
  return {
    verb: 'reaction',
    targetType: 'post',
    targetId: post.postId,
    targetName: feed.name,
    parentTargetId: feed.id,
    lastActionId: options.id,
    feed,
    ...scopeOf(feed),
    actor: actorOf(actor, options),
    at: options.at,
    audience: { kind: 'user', userId: post.owner },
  };
}

/** A reaction on a comment (`mentreact`, for the comment's author). */
export function aCommentReaction(
  actor: string,
  comment: { commentId: string; owner: string; postId: string },
  options: ActionOptions,
): Activity {
  const feed = feedOf(options);
  return {
    verb: 'mentreact',
    targetType: 'post',
    targetId: comment.commentId,
    targetName: feed.name,
    parentTargetId: comment.postId,
    lastActionId: options.id,
    feed,
    ...scopeOf(feed),
    actor: actorOf(actor, options),
    at: options.at,
    audience: { kind: 'user', userId: comment.owner },
  };
}

/** A mention of `mentioned` in a post (`in: 'post'`, target the post) or a comment (target the comment). */
export function aMention(
  actor: string,
  mentioned: string,
  where: { in: 'post'; postId: string } | { in: 'comment'; commentId: string; postId: string },
  options: Omit<ActionOptions, 'id'>,
): Activity {
  const feed = feedOf({ ...options, id: '' });
  const targetId = where.in === 'post' ? where.postId : where.commentId;
  return {
    verb: 'mention',
    mentionIn: where.in,
    targetType: 'post',
    targetId,
    targetName: feed.name,
    ...(where.in === 'comment' ? { parentTargetId: where.postId } : {}),
    lastActionId: targetId,
    feed,
    ...scopeOf(feed),
    actor: actorOf(actor, { ...options, id: targetId }),
    at: options.at,
    audience: { kind: 'user', userId: mentioned },
  };
}
