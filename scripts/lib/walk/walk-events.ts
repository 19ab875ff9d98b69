// The deliveries of try-stack's inbox walk, shaped as docs/contract.md shows them (removals as the
// inbox's removal events): a community, its users' posts and comments, a comment's deletion.

export interface WalkUser {
  userId: string;
  displayName: string;
}
export interface WalkCommunity {
  communityId: string;
  displayName: string;
}
/** A post of `owner` in `community`. */
export interface WalkPost {
  postId: string;
  owner: WalkUser;
  community: WalkCommunity;
}

const iso = (at: number) => new Date(at).toISOString();
const envelope = (event: string, data: object) => JSON.stringify({ event, data });
const postRef = (post: WalkPost) => ({
  postId: post.postId,
  postedUserId: post.owner.userId,
  targetType: 'community',
  targetId: post.community.communityId,
});
/** What a comment's creation and deletion both say of it: a comment (not a reply) on `post`. */
const commentRef = (post: WalkPost, comment: { commentId: string; author: WalkUser }) => ({
  commentId: comment.commentId,
  userId: comment.author.userId,
  referenceType: 'post',
  referenceId: post.postId,
  parentId: null,
});

export function joinBody(community: WalkCommunity, users: WalkUser[], at: number): string {
  return envelope('community.didJoin', {
    community,
    userIds: users.map((user) => user.userId),
    createdAt: iso(at),
    users,
  });
}

export function postBody(post: WalkPost, at: number): string {
  return envelope('post.didCreate', {
    post: { ...postRef(post), text: 'walk', createdAt: iso(at) },
    community: post.community,
    users: [post.owner],
  });
}

/** A comment by `author` on `post`, mentioning `mentions` (a `mention` record each). */
export function commentBody(
  post: WalkPost,
  comment: { commentId: string; author: WalkUser; segmentNumber: number; mentions?: WalkUser[] },
  at: number,
): string {
  const mentions = comment.mentions ?? [];
  return envelope('comment.didCreate', {
    comment: {
      ...commentRef(post, comment),
      segmentNumber: comment.segmentNumber,
      text: 'walk',
      createdAt: iso(at),
      mentionees: mentions.length === 0 ? [] : [{ type: 'user', userIds: mentions.map((u) => u.userId) }],
    },
    post: postRef(post),
    parentComment: null,
    community: post.community,
    users: [comment.author, post.owner, ...mentions],
  });
}

export function commentDeleteBody(
  post: WalkPost,
  comment: { commentId: string; author: WalkUser },
  at: number,
): string {
  return envelope('comment.didDelete', {
    comment: commentRef(post, comment),
    post: postRef(post),
    parentComment: null,
    community: post.community,
    deletedAt: iso(at),
    users: [],
  });
}

/** A post of `author` on their own feed mentioning `mentioned`: one `mention` record, never grouped. */
export function feedMentionBody(postId: string, author: WalkUser, mentioned: WalkUser, at: number): string {
  return envelope('post.didCreate', {
    post: {
      postId,
      postedUserId: author.userId,
      targetType: 'user',
      targetId: author.userId,
      text: 'walk',
      createdAt: iso(at),
      mentionees: [{ type: 'user', userIds: [mentioned.userId] }],
    },
    users: [author, mentioned],
  });
}
