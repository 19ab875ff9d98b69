import type { BenchEnvelope } from './deleted-post-scenario.ts';

/**
 * The envelopes both worker benches send (bench-worker.ts on PostgreSQL, bench-worker-mongo.ts on
 * the MongoDB adapter), so their figures are for the same work: comments grouped into `posts`
 * records of a community, posts on a user feed each mentioning one user, and posts in a community.
 * `iso` dates them.
 */
export function workerBenchEnvelopes(iso: (ms: number) => string, posts: number) {
  const users = (ids: string[]) => ids.map((userId) => ({ userId, displayName: userId }));
  const comment = (index: number, author: string, minute: number): BenchEnvelope => {
    const postId = `p-${index % posts}`;
    return {
      event: 'comment.didCreate',
      data: {
        comment: {
          commentId: `cm-${author}-${index}`,
          userId: author,
          referenceType: 'post',
          referenceId: postId,
          parentId: null,
          segmentNumber: 1,
          createdAt: iso(minute * 60_000 + index),
        },
        post: { postId, postedUserId: 'u-owner', targetType: 'community', targetId: 'c-bench' },
        community: { communityId: 'c-bench', displayName: 'Bench Club' },
        users: users([author]),
      },
    };
  };
  // A post on a user feed mentioning one user: exactly one new `mention` record.
  const mention = (index: number): BenchEnvelope => ({
    event: 'post.didCreate',
    data: {
      post: {
        postId: `pm-${index}`,
        postedUserId: 'u-writer',
        targetType: 'user',
        targetId: 'u-writer',
        text: 'hi',
        createdAt: iso(3 * 60_000 + index),
        mentionees: [{ type: 'user', userIds: [`u-reader${index}`] }],
      },
      users: users(['u-writer']),
    },
  });
  // A post in `community` by `author`: one `post` record for each of its members.
  const post = (community: string, postId: string, author: string, minute: number): BenchEnvelope => ({
    event: 'post.didCreate',
    data: {
      post: {
        postId,
        postedUserId: author,
        targetType: 'community',
        targetId: community,
        text: 'hello',
        createdAt: iso(minute * 60_000),
      },
      community: { communityId: community, displayName: community },
      users: users([author]),
    },
  });
  return { comment, mention, post };
}
