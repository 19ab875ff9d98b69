import {
  commentEvent,
  membershipEvent,
  minute,
  postEvent,
  reactionEvent,
  type TestEnvelope,
} from './event-builder.ts';

export interface DayEvent {
  envelope: TestEnvelope;
  /** ISO time the receiver accepted it: after the action, sometimes long after (retries, spool). */
  receivedAt: string;
}

/** mulberry32: the same seed gives the same day on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * A day of a small platform's tray events in the order the receiver accepted them: joins and
 * leaves (most with createdAt, a fifth without, which then count from their receipt), community
 * and user-feed posts with mentions, comments, replies and reactions. Each event is received
 * 0 to 90 minutes after it happened, so arrival order is not creation order: posts arrive before
 * the joins that precede them and leaves arrive after posts they precede.
 */
export function dayOfEvents(count: number, seed = 7): DayEvent[] {
  const random = seeded(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const users = ['u-ana', 'u-ben', 'u-cid', 'u-dee', 'u-eve', 'u-fay', 'u-gus', 'u-hal'];
  const communities = ['c-day1', 'c-day2'];
  const posts: { postId: string; owner: string; communityId?: string }[] = [];
  const comments: { commentId: string; userId: string; post: (typeof posts)[number] }[] = [];
  const events: (DayEvent & { order: number })[] = [];
  for (let n = 0; n < count; n += 1) {
    const at = (n * 1300) / count;
    const receivedAt = minute(at + Math.floor(random() * 90));
    const actor = pick(users);
    const roll = random();
    let envelope: TestEnvelope;
    if (roll < 0.25) {
      const kind = random() < 0.7 ? 'join' : 'leave';
      const timed = random() < 0.8;
      const change = membershipEvent(kind, [actor], pick(communities), timed ? minute(at) : undefined);
      // Without createdAt the change happens when it is received.
      events.push({ envelope: change, receivedAt: timed ? receivedAt : minute(at), order: n });
      continue;
    } else if (roll < 0.45 || posts.length === 0) {
      const onUserFeed = random() < 0.2;
      const communityId = onUserFeed ? undefined : pick(communities);
      const postId = `p-day${n}`;
      posts.push({ postId, owner: actor, ...(communityId ? { communityId } : {}) });
      envelope = postEvent({
        postId,
        author: actor,
        createdAt: minute(at),
        ...(communityId ? { communityId, communityName: `Club ${communityId}` } : { feed: 'user' as const }),
        ...(random() < 0.3 ? { mentions: [pick(users)] } : {}),
      });
    } else if (roll < 0.75) {
      const parent = random() < 0.3 && comments.length > 0 ? pick(comments) : undefined;
      const post = parent?.post ?? pick(posts);
      const commentId = `cm-day${n}`;
      comments.push({ commentId, userId: actor, post });
      envelope = commentEvent({
        commentId,
        author: actor,
        postId: post.postId,
        postOwner: post.owner,
        createdAt: minute(at),
        segmentNumber: n,
        ...(post.communityId ? { communityId: post.communityId } : { feed: 'user' as const }),
        ...(parent ? { parent: { commentId: parent.commentId, userId: parent.userId } } : {}),
        ...(random() < 0.2 ? { mentions: [pick(users)] } : {}),
      });
    } else {
      const comment = random() < 0.4 && comments.length > 0 ? pick(comments) : undefined;
      const post = comment?.post ?? pick(posts);
      envelope = reactionEvent({
        reactionId: `r-day${n}`,
        author: actor,
        postId: post.postId,
        postOwner: post.owner,
        createdAt: minute(at),
        ...(post.communityId ? { communityId: post.communityId } : { feed: 'user' as const }),
        ...(comment ? { comment: { commentId: comment.commentId, userId: comment.userId } } : {}),
      });
    }
    events.push({ envelope, receivedAt, order: n });
  }
  return events
    .sort((a, b) => Date.parse(a.receivedAt) - Date.parse(b.receivedAt) || a.order - b.order)
    .map(({ envelope, receivedAt }) => ({ envelope, receivedAt }));
}
