import { createHash } from 'node:crypto';

// Typed fixtures for the events of docs/contract.md#event-catalogue: each builder returns one valid event;
// a test passes only the fields its rule is about.

export interface TestEnvelope {
  event: string;
  data: Record<string, unknown>;
}

export interface TestUser {
  userId: string;
  displayName?: string;
  avatarFileUrl?: string;
  avatarCustomUrl?: string;
}

/** A whole minute a day before the run started: recent enough that nothing has expired. */
export const BASE_TIME = Math.floor((Date.now() - 24 * 3600_000) / 60_000) * 60_000;

/** ISO time `minutes` after BASE_TIME, so tests order actions by a readable number. */
export function minute(minutes: number): string {
  return new Date(BASE_TIME + minutes * 60_000).toISOString();
}

/** Display name for an id like `u-ana` -> `Ana`. */
export function nameOf(userId: string): string {
  const base = userId.replace(/^u-/, '');
  return base.charAt(0).toUpperCase() + base.slice(1);
}

function profiles(ids: string[], overrides: TestUser[] = []): TestUser[] {
  return [...new Set(ids)].map((userId) => ({
    userId,
    displayName: nameOf(userId),
    ...overrides.find((user) => user.userId === userId),
  }));
}

const hiking = { communityId: 'c-hike', displayName: 'Hiking Club' };

export interface PostOptions {
  postId?: string;
  author?: string;
  communityId?: string;
  communityName?: string;
  /** `user`: a post on `feedOwner`'s user feed (no community). */
  feed?: 'community' | 'user';
  feedOwner?: string;
  createdAt?: string;
  mentions?: string[];
  users?: TestUser[];
}

export function postEvent(options: PostOptions = {}): TestEnvelope {
  const author = options.author ?? 'u-ana';
  const feed = options.feed ?? 'community';
  const community = {
    communityId: options.communityId ?? hiking.communityId,
    displayName: options.communityName ?? hiking.displayName,
  };
  const targetId = feed === 'community' ? community.communityId : (options.feedOwner ?? author);
  return {
    event: 'post.didCreate',
    data: {
      post: {
        postId: options.postId ?? 'p-100',
        postedUserId: author,
        targetType: feed,
        targetId,
        text: 'Trail is open again',
        createdAt: options.createdAt ?? minute(0),
        mentionees: options.mentions ? [{ type: 'user', userIds: options.mentions }] : [],
      },
      ...(feed === 'community' ? { community } : {}),
      users: profiles(
        [author, targetId, ...(options.mentions ?? [])].filter((id) => id.startsWith('u-')),
        options.users,
      ),
    },
  };
}

export interface CommentOptions {
  commentId?: string;
  author?: string;
  postId?: string;
  postOwner?: string;
  /** A reply: the parent comment and its author. */
  parent?: { commentId: string; userId: string };
  segmentNumber?: number;
  createdAt?: string;
  feed?: 'community' | 'user';
  communityId?: string;
  communityName?: string;
  mentions?: string[];
  users?: TestUser[];
}

export function commentEvent(options: CommentOptions = {}): TestEnvelope {
  const author = options.author ?? 'u-cid';
  const postOwner = options.postOwner ?? 'u-ana';
  const feed = options.feed ?? 'community';
  const community = {
    communityId: options.communityId ?? hiking.communityId,
    displayName: options.communityName ?? hiking.displayName,
  };
  return {
    event: 'comment.didCreate',
    data: {
      comment: {
        commentId: options.commentId ?? 'cm-7',
        userId: author,
        referenceType: 'post',
        referenceId: options.postId ?? 'p-100',
        parentId: options.parent?.commentId ?? null,
        segmentNumber: options.segmentNumber ?? 4,
        text: 'See you there',
        createdAt: options.createdAt ?? minute(5),
        mentionees: options.mentions ? [{ type: 'user', userIds: options.mentions }] : [],
      },
      post: {
        postId: options.postId ?? 'p-100',
        postedUserId: postOwner,
        targetType: feed,
        targetId: feed === 'community' ? community.communityId : postOwner,
      },
      parentComment: options.parent ?? null,
      ...(feed === 'community' ? { community } : {}),
      users: profiles(
        [author, postOwner, ...(options.parent ? [options.parent.userId] : []), ...(options.mentions ?? [])],
        options.users,
      ),
    },
  };
}

export interface ReactionOptions {
  reactionId?: string;
  author?: string;
  postId?: string;
  postOwner?: string;
  /** A reaction on a comment: the comment and its author. */
  comment?: { commentId: string; userId: string };
  createdAt?: string;
  feed?: 'community' | 'user';
  communityId?: string;
  users?: TestUser[];
}

export function reactionEvent(options: ReactionOptions = {}): TestEnvelope {
  const author = options.author ?? 'u-dee';
  const postOwner = options.postOwner ?? 'u-ana';
  const feed = options.feed ?? 'community';
  const community = { ...hiking, ...(options.communityId ? { communityId: options.communityId } : {}) };
  return {
    event: 'reaction.didAdd',
    data: {
      reaction: {
        reactionId: options.reactionId ?? 'r-9',
        reactionName: 'like',
        userId: author,
        referenceType: options.comment ? 'comment' : 'post',
        referenceId: options.comment?.commentId ?? options.postId ?? 'p-100',
        createdAt: options.createdAt ?? minute(6),
      },
      post: {
        postId: options.postId ?? 'p-100',
        postedUserId: postOwner,
        targetType: feed,
        targetId: feed === 'community' ? community.communityId : postOwner,
      },
      ...(options.comment ? { comment: { ...options.comment, referenceId: options.postId ?? 'p-100' } } : {}),
      ...(feed === 'community' ? { community } : {}),
      users: profiles([author], options.users),
    },
  };
}

/** A join or leave; without `createdAt` it counts from the time the receiver accepted it. */
export function membershipEvent(
  kind: 'join' | 'leave',
  userIds: string[],
  communityId = hiking.communityId,
  createdAt?: string,
): TestEnvelope {
  return {
    event: kind === 'join' ? 'community.didJoin' : 'community.didLeave',
    data: {
      community: { communityId, displayName: hiking.displayName },
      userIds,
      ...(createdAt === undefined ? {} : { createdAt }),
      users: profiles(userIds),
    },
  };
}

export function userUpdateEvent(user: TestUser): TestEnvelope {
  return { event: 'user.didUpdate', data: { users: profiles([user.userId], [user]) } };
}

export function userDeleteEvent(userId: string): TestEnvelope {
  return { event: 'user.didDelete', data: { users: [{ userId, displayName: 'Deleted user' }] } };
}

/** The receiver's dedupe key: SHA-256 of the body as it would be delivered. */
export function dedupeKeyOf(envelope: TestEnvelope): string {
  return createHash('sha256').update(JSON.stringify(envelope)).digest('hex');
}

const postRef = (postId: string, owner: string, feed: 'community' | 'user') => ({
  postId,
  postedUserId: owner,
  targetType: feed,
  targetId: feed === 'community' ? hiking.communityId : owner,
});

/** post.didDelete of `postId` (by `author`, in c-hike unless on a user feed). */
export function postDeleteEvent(
  options: { postId?: string; author?: string; feed?: 'community' | 'user'; deletedAt?: string } = {},
): TestEnvelope {
  const author = options.author ?? 'u-ana';
  const feed = options.feed ?? 'community';
  return {
    event: 'post.didDelete',
    data: {
      post: postRef(options.postId ?? 'p-100', author, feed),
      ...(feed === 'community' ? { community: hiking } : {}),
      deletedAt: options.deletedAt ?? minute(30),
      users: [],
    },
  };
}

/** comment.didDelete of `commentId` on p-100 (a reply when `parent` is given). */
export function commentDeleteEvent(
  options: {
    commentId?: string;
    author?: string;
    parent?: { commentId: string; userId: string };
    post?: { postId: string; owner: string };
  } = {},
): TestEnvelope {
  const post = options.post ?? { postId: 'p-100', owner: 'u-ana' };
  return {
    event: 'comment.didDelete',
    data: {
      comment: {
        commentId: options.commentId ?? 'cm-7',
        userId: options.author ?? 'u-cid',
        referenceType: 'post',
        referenceId: post.postId,
        parentId: options.parent?.commentId ?? null,
      },
      post: postRef(post.postId, post.owner, 'community'),
      parentComment: options.parent ?? null,
      community: hiking,
      deletedAt: minute(31),
      users: [],
    },
  };
}

/** reaction.didRemove of `reactionId` on p-100 (or on `comment`). */
export function reactionRemoveEvent(
  options: { reactionId?: string; comment?: { commentId: string; userId: string } } = {},
): TestEnvelope {
  return {
    event: 'reaction.didRemove',
    data: {
      reaction: {
        reactionId: options.reactionId ?? 'r-9',
        reactionName: 'like',
        userId: 'u-dee',
        referenceType: options.comment ? 'comment' : 'post',
        referenceId: options.comment?.commentId ?? 'p-100',
      },
      post: postRef('p-100', 'u-ana', 'community'),
      ...(options.comment ? { comment: { ...options.comment, referenceId: 'p-100' } } : {}),
      community: hiking,
      removedAt: minute(32),
      users: [],
    },
  };
}
