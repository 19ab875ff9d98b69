// `bench:worker`'s removal rows (docs/tray-rules.md#inbox): a post fanned out to a community, comments
// on it, then one comment deleted and the post deleted. Here the deliveries and the records they
// reach; the bench times the deletions and confirms each by a query.

/** A delivery as the bench enqueues it. */
export interface BenchEnvelope {
  event: string;
  data: Record<string, unknown>;
}

/** A record by whom it belongs to, its verb and its target: what names it in every adapter. */
export interface RecordRef {
  userId: string;
  verb: 'post' | 'comment' | 'mention' | 'mentreply';
  targetId: string;
}

export interface DeletedPostScenario {
  /** The community, to import with `members + 1` members `<community>-m0...`: m0 is the post's author. */
  community: string;
  post: BenchEnvelope;
  comments: BenchEnvelope[];
  /** The post author's `comment` record, grouping the top-level comments... */
  commentRecord: RecordRef;
  /** ...of this many actors, one comment each. */
  commentActors: number;
  /** The newest top-level comment without a mention: its deletion leaves the comment record one actor fewer. */
  commentDelete: BenchEnvelope;
  deletedComment: { commentId: string; userId: string };
  postDelete: BenchEnvelope;
  /**
   * Every record the post's deletion removes: the members' `post` records, the author's `comment`
   * record, a `mention` record per comment that mentions someone and the first commenter's
   * `mentreply` record grouping the replies to their comment.
   */
  records: RecordRef[];
}

const COMMUNITY = 'c-gone';
const POST_ID = 'pg-gone';

/**
 * `comments` comments on one post to `members` members (at least 2 comments: the first is replied
 * to, the second may be deleted): every tenth (i % 10 = 9) a reply to the first comment, every
 * tenth (i % 10 = 0) mentioning a user of its own, the rest plain. The commenters and the
 * mentioned are no members (the tray holds nothing back from a user it knows no join of), so the
 * post's records are exactly the members'. `at(i)` is the ISO time of the i-th action.
 */
export function deletedPostScenario(options: {
  members: number;
  comments: number;
  at: (index: number) => string;
}): DeletedPostScenario {
  const { members, comments, at } = options;
  if (comments < 2) throw new Error('the deleted-post scenario needs at least 2 comments');
  const author = `${COMMUNITY}-m0`;
  const profile = (userId: string) => ({ userId, displayName: userId });
  const postRef = { postId: POST_ID, postedUserId: author, targetType: 'community', targetId: COMMUNITY };
  const community = { communityId: COMMUNITY, displayName: 'Gone Club' };
  const commenter = (index: number) => `u-gone-c${index}`;
  const commentId = (index: number) => `cm-gone-${index}`;
  const isReply = (index: number) => index % 10 === 9;
  const mentions = (index: number) => index % 10 === 0;
  const firstComment = { commentId: commentId(0), userId: commenter(0) };

  const comment = (index: number): BenchEnvelope => ({
    event: 'comment.didCreate',
    data: {
      comment: {
        commentId: commentId(index),
        userId: commenter(index),
        referenceType: 'post',
        referenceId: POST_ID,
        parentId: isReply(index) ? firstComment.commentId : null,
        segmentNumber: 1,
        createdAt: at(index + 1),
        mentionees: mentions(index) ? [{ type: 'user', userIds: [`u-gone-x${index}`] }] : [],
      },
      post: postRef,
      parentComment: isReply(index) ? firstComment : null,
      community,
      users: [profile(commenter(index))],
    },
  });
  const indexes = Array.from({ length: comments }, (_, index) => index);
  const topLevel = indexes.filter((index) => !isReply(index));
  const deleted = topLevel.filter((index) => !mentions(index)).at(-1) ?? 1;
  const deletedComment = { commentId: commentId(deleted), userId: commenter(deleted) };
  const commentRecord: RecordRef = { userId: author, verb: 'comment', targetId: POST_ID };

  return {
    community: COMMUNITY,
    post: {
      event: 'post.didCreate',
      data: {
        post: { ...postRef, text: 'soon gone', createdAt: at(0) },
        community,
        users: [profile(author)],
      },
    },
    comments: indexes.map(comment),
    commentRecord,
    commentActors: topLevel.length,
    commentDelete: {
      event: 'comment.didDelete',
      data: {
        comment: { ...deletedComment, referenceId: POST_ID, parentId: null },
        post: postRef,
        community,
        deletedAt: at(comments + 1),
        users: [profile(deletedComment.userId)],
      },
    },
    deletedComment,
    postDelete: {
      event: 'post.didDelete',
      data: { post: postRef, community, deletedAt: at(comments + 2), users: [profile(author)] },
    },
    records: [
      ...Array.from({ length: members }, (_, m): RecordRef => ({
        userId: `${COMMUNITY}-m${m + 1}`,
        verb: 'post',
        targetId: COMMUNITY,
      })),
      commentRecord,
      ...indexes.filter(mentions).map((index): RecordRef => ({
        userId: `u-gone-x${index}`,
        verb: 'mention',
        targetId: commentId(index),
      })),
      ...(indexes.some(isReply)
        ? [{ userId: firstComment.userId, verb: 'mentreply' as const, targetId: firstComment.commentId }]
        : []),
    ],
  };
}
