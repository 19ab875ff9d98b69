import type { z } from 'zod';
import type { FeedRef } from './feed-ref.ts';
import type { Activity, ActorInfo } from './activity.ts';
import type {
  commentDidCreate,
  commentDidDelete,
  postDidCreate,
  postDidDelete,
  postRefSchema,
  reactionDidAdd,
  reactionDidRemove,
  UserProfile,
} from './event-schemas.ts';
import { nameOrId } from './display-name.ts';
import type { Removal } from './removal.ts';
import { PayloadError } from '../../shared/errors/payload-error.ts';

type Post = z.infer<typeof postDidCreate>;
type Comment = z.infer<typeof commentDidCreate>;
type Reaction = z.infer<typeof reactionDidAdd>;
type PostRef = z.infer<typeof postRefSchema>;
type PostDelete = z.infer<typeof postDidDelete>;
type CommentDelete = z.infer<typeof commentDidDelete>;
type ReactionRemove = z.infer<typeof reactionDidRemove>;
type Community = { communityId: string; displayName?: string | null | undefined } | null | undefined;

// Record fields per verb: docs/contract.md#record-fields-per-verb. targetName is the
// feed's name for every verb: the community's name, or the feed owner's display name on a user
// feed (payloads carry no post title, and it is what the message templates name).

/** post.didCreate: a `post` record per community member (fan-out) and a `mention` per mentionee. */
export function mapPost(payload: Post): Activity[] {
  const { post } = payload;
  const feed = feedOf(post, payload.community, payload.users);
  const base = {
    actor: actorOf(post.postedUserId, payload.users),
    at: post.createdAt,
    feed,
    ...communityOf(feed),
  };
  const result: Activity[] = [];
  // Posts on a user feed are not tray events (docs/contract.md#postdidcreate); their mentions are.
  if (feed.kind === 'community') {
    result.push({
      ...base,
      verb: 'post',
      targetType: 'community',
      targetId: feed.id,
      targetName: feed.name,
      lastActionId: post.postId,
      audience: { kind: 'community', communityId: feed.id },
    });
  }
  for (const userId of mentioned(post.mentionees)) {
    result.push({
      ...base,
      verb: 'mention',
      mentionIn: 'post',
      targetType: 'post',
      targetId: post.postId,
      targetName: feed.name,
      lastActionId: post.postId,
      audience: { kind: 'user', userId },
    });
  }
  return result;
}

/** comment.didCreate: `comment` for the post owner, or `mentreply` for the parent comment's owner. */
export function mapComment(payload: Comment): Activity[] {
  const { comment, post } = payload;
  // The post's author is told, and the record is the post's: a comment on another post would tell
  // them of it.
  onPost('data.comment.referenceId', comment.referenceId, post);
  const feed = feedOf(post, payload.community, payload.users);
  const segment = comment.segmentNumber ?? undefined;
  const base = {
    actor: actorOf(comment.userId, payload.users),
    at: comment.createdAt,
    feed,
    ...communityOf(feed),
    targetType: 'post' as const,
    targetName: feed.name,
    lastActionId: comment.commentId,
    ...(segment === undefined ? {} : { lastActionSegmentNo: segment }),
  };
  const result: Activity[] = [];
  if (comment.parentId) {
    if (!payload.parentComment)
      throw new PayloadError('data.parentComment: required when comment.parentId is set');
    // Its author is the one notified: a parentComment of another comment would tell them of it.
    if (payload.parentComment.commentId !== comment.parentId)
      throw new PayloadError('data.parentComment.commentId: expected the comment comment.parentId names');
    result.push({
      ...base,
      verb: 'mentreply',
      targetId: comment.parentId,
      parentTargetId: post.postId,
      audience: { kind: 'user', userId: payload.parentComment.userId },
    });
  } else {
    result.push({
      ...base,
      verb: 'comment',
      targetId: post.postId,
      parentTargetId: post.targetId,
      audience: { kind: 'user', userId: post.postedUserId },
    });
  }
  for (const userId of mentioned(comment.mentionees)) {
    const { lastActionSegmentNo: _segment, ...withoutSegment } = base;
    result.push({
      ...withoutSegment,
      verb: 'mention',
      mentionIn: 'comment',
      targetId: comment.commentId,
      parentTargetId: post.postId,
      audience: { kind: 'user', userId },
    });
  }
  return result;
}

/** reaction.didAdd: `reaction` for the post owner, or `mentreact` for the comment owner. */
export function mapReaction(payload: Reaction): Activity[] {
  const { reaction, post } = payload;
  const feed = feedOf(post, payload.community, payload.users);
  const base = {
    actor: actorOf(reaction.userId, payload.users),
    at: reaction.createdAt,
    feed,
    ...communityOf(feed),
    targetType: 'post' as const,
    targetName: feed.name,
    lastActionId: reaction.reactionId,
  };
  if (reaction.referenceType === 'post') {
    // As for a comment: the post's author is told.
    onPost('data.reaction.referenceId', reaction.referenceId, post);
    return [
      {
        ...base,
        verb: 'reaction',
        targetId: post.postId,
        parentTargetId: post.targetId,
        audience: { kind: 'user', userId: post.postedUserId },
      },
    ];
  }
  if (!payload.comment)
    throw new PayloadError('data.comment: required when reaction.referenceType is comment');
  // Its author is the one notified, as for a reply's parentComment.
  if (payload.comment.commentId !== reaction.referenceId)
    throw new PayloadError('data.comment.commentId: expected the comment reaction.referenceId names');
  const commentOn = payload.comment.referenceId;
  if (commentOn !== undefined && commentOn !== null) onPost('data.comment.referenceId', commentOn, post);
  return [
    {
      ...base,
      verb: 'mentreact',
      targetId: reaction.referenceId,
      parentTargetId: post.postId,
      audience: { kind: 'user', userId: payload.comment.userId },
    },
  ];
}

// Removals (docs/tray-rules.md#inbox): one tombstone each; what it voids is removal.ts's rule, so
// the payload's owners and community are not needed to find the records it changes (a post's
// community only says how long its tombstone must live).

/** post.didDelete: the post, and with it everything on it and its comments. */
export function mapPostDelete(payload: PostDelete): Removal[] {
  const { postId, targetType, targetId } = payload.post;
  // As for its creation: another community named beside the post's is a payload at odds with itself.
  if (targetType === 'community' && payload.community) inPostCommunity(payload.community, payload.post);
  // The community its post records belong to (a post on a user feed makes none).
  const communityId = targetType === 'community' ? targetId : undefined;
  return [
    { kind: 'post', id: postId, postId, at: payload.deletedAt, ...(communityId ? { communityId } : {}) },
  ];
}

/**
 * comment.didDelete: the comment or reply, the replies and reactions to it, the mentions in it. A
 * reply's parentComment is not needed for that (nor asked for): a deletion sent without it still
 * takes the reply out of every tray it reached.
 */
export function mapCommentDelete(payload: CommentDelete): Removal[] {
  const { comment, post } = payload;
  // As for its creation: the tombstone is kept by post, so another post's would void nothing.
  onPost('data.comment.referenceId', comment.referenceId, post);
  return [{ kind: 'comment', id: comment.commentId, postId: post.postId, at: payload.deletedAt }];
}

/** reaction.didRemove: that reaction (a comment's, too, without the comment: it is not needed). */
export function mapReactionRemove(payload: ReactionRemove): Removal[] {
  const { reaction, post } = payload;
  if (reaction.referenceType === 'post') onPost('data.reaction.referenceId', reaction.referenceId, post);
  return [{ kind: 'reaction', id: reaction.reactionId, postId: post.postId, at: payload.removedAt }];
}

function feedOf(post: PostRef, community: Community, users: UserProfile[]): FeedRef {
  if (post.targetType === 'community') {
    if (!community) throw new PayloadError('data.community: required for a post in a community');
    // Its members are the audience: another community's would be told of a post not theirs.
    inPostCommunity(community, post);
    return {
      kind: 'community',
      id: community.communityId,
      name: nameOrId(community.displayName, community.communityId),
    };
  }
  // A user feed is named after its owner ("... in Ana feed"); the id stands in when the owner's
  // profile is not in the payload or names them blank.
  const owner = users.find((user) => user.userId === post.targetId);
  return { kind: 'user', id: post.targetId, name: nameOrId(owner?.displayName, post.targetId) };
}

/**
 * An id the payload gives for the post it is about (a comment's or a reaction's `referenceId`):
 * one naming another post than `data.post` is a payload at odds with itself, refused rather than
 * acted on for the wrong post.
 */
function onPost(field: string, referenceId: string, post: PostRef): void {
  if (referenceId !== post.postId) throw new PayloadError(`${field}: expected the post data.post names`);
}

/** The payload's community, which must be the one its community post is on. */
function inPostCommunity(community: { communityId: string }, post: PostRef): void {
  if (community.communityId !== post.targetId)
    throw new PayloadError('data.community.communityId: expected the community post.targetId names');
}

/** The community a target on this feed belongs to: every action on a community's posts is scoped to it. */
function communityOf(feed: FeedRef): { communityId?: string } {
  return feed.kind === 'community' ? { communityId: feed.id } : {};
}

/** The actor as the payload shows them; the id stands in for a name the payload lacks or leaves blank. */
function actorOf(userId: string, users: UserProfile[]): ActorInfo {
  const profile = users.find((user) => user.userId === userId);
  return {
    userId,
    name: nameOrId(profile?.displayName, userId),
    ...(profile?.avatarFileUrl ? { imageUrl: profile.avatarFileUrl } : {}),
    ...(profile?.avatarCustomUrl ? { avatarCustomUrl: profile.avatarCustomUrl } : {}),
  };
}

function mentioned(
  list: ({ type: string } | { type: 'user'; userIds: string[] })[] | null | undefined,
): string[] {
  return [...new Set((list ?? []).flatMap((m) => ('userIds' in m ? m.userIds : [])))];
}
