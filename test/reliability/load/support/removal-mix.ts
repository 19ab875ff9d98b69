import { dedupeKey } from '../../../../receiver/dedupe-key.ts';
import { random, type LoadEvent } from './load-sequence.ts';

/**
 * How far (in send order) a removal sits from the action it undoes. The receiver takes 48 requests
 * at once and the worker runs a few dozen jobs at once, so two events this far apart are processed
 * in their send order: the model can apply the sequence in send order and still be exact.
 */
export const REMOVAL_GAP = 600;

interface Parsed {
  event: string;
  data: Record<string, unknown> & {
    comment?: {
      commentId: string;
      userId: string;
      referenceId: string;
      parentId?: string | null;
      createdAt?: string;
    };
    reaction?: {
      reactionId: string;
      userId: string;
      referenceType: string;
      referenceId: string;
      createdAt: string;
    };
    post?: { postId: string; postedUserId: string; targetType: string; targetId: string; createdAt?: string };
    parentComment?: unknown;
    community?: unknown;
    users?: unknown;
  };
}

const later = (iso: string) => new Date(Date.parse(iso) + 1).toISOString();

/** The removal undoing a comment, a reaction or a post on its owner's feed (spec payloads), or undefined. */
export function removalOf(body: string): string | undefined {
  const { event, data } = JSON.parse(body) as Parsed;
  const { post, users } = data;
  if (!post) return undefined;
  const postRef = {
    postId: post.postId,
    postedUserId: post.postedUserId,
    targetType: post.targetType,
    targetId: post.targetId,
  };
  const around = data.community ? { community: data.community } : {};
  if (event === 'comment.didCreate' && data.comment) {
    const { commentId, userId, referenceId, parentId, createdAt } = data.comment;
    return JSON.stringify({
      event: 'comment.didDelete',
      data: {
        comment: { commentId, userId, referenceId, parentId: parentId ?? null },
        post: postRef,
        parentComment: data.parentComment ?? null,
        ...around,
        deletedAt: later(createdAt!),
        users,
      },
    });
  }
  if (event === 'reaction.didAdd' && data.reaction) {
    const { reactionId, userId, referenceType, referenceId, createdAt } = data.reaction;
    return JSON.stringify({
      event: 'reaction.didRemove',
      data: {
        reaction: { reactionId, userId, referenceType, referenceId },
        post: postRef,
        ...(data.comment ? { comment: data.comment } : {}),
        ...around,
        removedAt: later(createdAt),
        users,
      },
    });
  }
  if (event === 'post.didCreate' && post.targetType === 'user' && post.createdAt)
    return JSON.stringify({
      event: 'post.didDelete',
      data: { post: postRef, deletedAt: later(post.createdAt), users },
    });
  return undefined;
}

/**
 * The sequence with removals mixed in: about `share` of the result are comment.didDelete,
 * reaction.didRemove and post.didDelete (of posts on their owner's feed), each REMOVAL_GAP events
 * after the action it undoes, or, for one in five, REMOVAL_GAP before it (a tombstone the action
 * meets on arrival). The first and last events stay where they are (the join and the proof of the
 * whole run). Deterministic for a seed.
 */
export function withRemovals(events: readonly LoadEvent[], share: number, seed: number): LoadEvent[] {
  const next = random(seed);
  const inserts = new Map<number, LoadEvent[]>();
  const wanted = Math.round((events.length * share) / (1 - share));
  let made = 0;
  for (let index = 1; index < events.length - 1 && made < wanted; index += 1) {
    if (next() >= (share / (1 - share)) * 1.6) continue;
    const body = removalOf(events[index]!.body);
    if (!body) continue;
    const before = next() < 0.2 && index > REMOVAL_GAP;
    const at = before ? index - REMOVAL_GAP : Math.min(index + REMOVAL_GAP, events.length - 1);
    const removal = { id: dedupeKey(Buffer.from(body)), body, event: (JSON.parse(body) as Parsed).event };
    inserts.set(at, [...(inserts.get(at) ?? []), removal]);
    made += 1;
  }
  return events.flatMap((event, index) => [...(inserts.get(index) ?? []), event]);
}
