// The delivery the live benches send (bench-stream.ts, bench-soak.ts).

/** A comment by u-actor on `owner`'s post `postId`: one new record for the owner. */
export function commentBody(owner: string, postId: string, at: number): string {
  return JSON.stringify({
    event: 'comment.didCreate',
    data: {
      comment: {
        commentId: `cm-${postId}`,
        userId: 'u-actor',
        referenceType: 'post',
        referenceId: postId,
        parentId: null,
        segmentNumber: 1,
        text: 'bench',
        createdAt: new Date(at).toISOString(),
        mentionees: [],
      },
      post: { postId, postedUserId: owner, targetType: 'community', targetId: 'c-bench' },
      parentComment: null,
      community: { communityId: 'c-bench', displayName: 'Bench' },
      users: [
        { userId: 'u-actor', displayName: 'Actor' },
        { userId: owner, displayName: owner },
      ],
    },
  });
}
