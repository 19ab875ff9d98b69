import { dedupeKey } from '../../../receiver/dedupe-key.ts';
import { channelDidCreate } from '../../receiver/support/signed-request.ts';
import type { BurstBody } from './burst.ts';

/**
 * A burst of tray events (payloads as in docs/contract.md#event-catalogue) whose final tray does not depend on
 * the order they are processed in: comments, replies and reactions by a small pool of actors (so
 * actors repeat and records group many actions) on a set of posts, mentions in comments and in
 * user-feed and community posts, community posts fanned out to the members at their createdAt,
 * joins dated by createdAt and sent anywhere in the burst (so most joins arrive after posts they
 * precede and must add them), leaves dated anywhere but sent first, global bans and unbans (the
 * newest createdAt wins, sent in either order, in the first half so the API has seen them by the
 * end), and a tenth of store-only
 * channel.didCreate events. Every action has its own id and its own time, and the times are a
 * shuffle of the send order, so "newest" is decided by the payload, never by arrival. What the
 * contract leaves to arrival order stays out: no rename or delete (they rewrite what earlier events
 * wrote). Some members leave and rejoin in a window of the burst, some leave for good in its tail,
 * with posts, comments and reactions throughout: what falls while they are away must not reach
 * them, whichever of the join and the action arrives first. The leaves go first, and are processed
 * before the rest is sent (they are `leading`: the senders wait for them), because a leave
 * processed after an action it covers takes nothing back (docs/tray-rules.md#leaving-and-rejoining-a-community):
 * the tray then depends on an order that faults (a stalled job run again, a retry) change and the
 * model cannot know, while a leave processed before everything it covers gives the same tray in
 * every order. Sent first is not enough: a worker runs many jobs at once, so a leave job may take
 * its place after a post sent later, and a fault that catches it in flight runs it again after the
 * posts (once seen on FerretDB: a storage outage two seconds into a burst). Late leaves have their own cases in the conformance suite, whose reference tray
 * follows the processing order. Deterministic for a tag: the same tag gives the same bodies.
 */
export function socialBurstBodies(tag: string, count: number): BurstBody[] {
  const random = seededRandom(tag);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const users = Array.from({ length: 12 }, (_, n) => ({ userId: `${tag}-u${n}`, displayName: `User ${n}` }));
  const ids = users.map((user) => user.userId);
  const communities = [0, 1].map((n) => ({ communityId: `${tag}-c${n}`, displayName: `Community ${n}` }));
  const posts = Array.from({ length: Math.max(6, Math.round(count / 25)) }, (_, n) => {
    const owner = ids[n % ids.length]!;
    const community = n % 3 === 2 ? undefined : communities[n % 2]!;
    return {
      post: {
        postId: `${tag}-p${n}`,
        postedUserId: owner,
        targetType: community ? 'community' : 'user',
        // A user feed: the owner's own or another user's (the feed owner is the parent target).
        targetId: community?.communityId ?? ids[(n * 5) % ids.length]!,
      },
      community,
    };
  });
  const comments: { commentId: string; userId: string; post: (typeof posts)[number] }[] = [];
  // Action times: a shuffle of 0..count-1 seconds after a base a day ago (nothing expires).
  const base = Math.floor((Date.now() - 24 * 3600_000) / 1000) * 1000;
  const iso = (second: number) => new Date(base + second * 1000).toISOString();
  const seconds = shuffle(
    Array.from({ length: count }, (_, n) => n),
    random,
  );
  const times = seconds.map(iso);
  const profilesOf = (...userIds: string[]) => users.filter((user) => userIds.includes(user.userId));
  // Leaves and rejoins in [quiet, quiet + span), final leaves from `tail` on.
  const span = Math.max(4, Math.floor(count / 20));
  const quiet = Math.floor(count / 2);
  const tail = count - span;
  const special = [
    ...membershipBodies(random, ids, communities, { count, quiet, span, tail }, iso),
    ...banBodies(random, ids, count, iso),
  ];

  const regular = Array.from({ length: count - special.length }, (_, n): unknown => {
    const createdAt = times[n]!;
    const actor = pick(ids);
    const target = pick(posts);
    const roll = random();
    const mention = random() < 0.2 ? [pick(ids)] : [];
    if (roll < 0.1) return JSON.parse(channelDidCreate(`${tag}-ch${n}`)) as unknown;
    if (roll < 0.2) {
      const community = pick(communities);
      return {
        event: 'post.didCreate',
        data: {
          post: {
            postId: `${tag}-cp${n}`,
            postedUserId: actor,
            targetType: 'community',
            targetId: community.communityId,
            text: 'news',
            createdAt,
            mentionees: mention.length > 0 ? [{ type: 'user', userIds: mention }] : [],
          },
          community,
          users: profilesOf(actor, ...mention),
        },
      };
    }
    if (roll < 0.25) {
      const feedOwner = pick(ids);
      return {
        event: 'post.didCreate',
        data: {
          post: {
            postId: `${tag}-up${n}`,
            postedUserId: actor,
            targetType: 'user',
            targetId: feedOwner,
            text: 'hello',
            createdAt,
            mentionees: [{ type: 'user', userIds: mention.length > 0 ? mention : [pick(ids)] }],
          },
          users: profilesOf(actor, feedOwner, ...mention),
        },
      };
    }
    if (roll < 0.65 || comments.length === 0) {
      const parent = roll >= 0.5 && comments.length > 0 ? pick(comments) : undefined;
      const on = parent?.post ?? target;
      const commentId = `${tag}-cm${n}`;
      comments.push({ commentId, userId: actor, post: on });
      return {
        event: 'comment.didCreate',
        data: {
          comment: {
            commentId,
            userId: actor,
            referenceType: 'post',
            referenceId: on.post.postId,
            parentId: parent?.commentId ?? null,
            segmentNumber: n,
            text: 'nice',
            createdAt,
            mentionees: mention.length > 0 ? [{ type: 'user', userIds: mention }] : [],
          },
          post: on.post,
          ...(on.community ? { community: on.community } : {}),
          parentComment: parent ? { commentId: parent.commentId, userId: parent.userId } : null,
          users: profilesOf(actor, on.post.postedUserId, parent?.userId ?? '', ...mention),
        },
      };
    }
    const onComment = roll >= 0.88 ? pick(comments) : undefined;
    const on = onComment?.post ?? target;
    return {
      event: 'reaction.didAdd',
      data: {
        reaction: {
          reactionId: `${tag}-r${n}`,
          reactionName: 'like',
          userId: actor,
          referenceType: onComment ? 'comment' : 'post',
          referenceId: onComment?.commentId ?? on.post.postId,
          createdAt,
        },
        post: on.post,
        ...(onComment
          ? {
              comment: {
                commentId: onComment.commentId,
                userId: onComment.userId,
                referenceId: on.post.postId,
              },
            }
          : {}),
        ...(on.community ? { community: on.community } : {}),
        users: profilesOf(actor),
      },
    };
  });
  // The joins, bans and unbans at random places of the send order (bans in the first half), then
  // the leaves ahead of everything.
  const envelopes = [...regular];
  for (const { envelope, sent } of special) {
    if (sent === 'first') continue;
    const within = sent === 'firstHalf' ? Math.floor(envelopes.length / 2) : envelopes.length;
    envelopes.splice(Math.floor(random() * (within + 1)), 0, envelope);
  }
  const first = special.filter(({ sent }) => sent === 'first').map(({ envelope }) => envelope);
  envelopes.unshift(...first);
  return envelopes.map((envelope, index) => {
    const body = JSON.stringify(envelope);
    return {
      id: dedupeKey(Buffer.from(body)),
      body,
      ...(index < first.length ? { leading: true as const } : {}),
    };
  });
}

interface Special {
  envelope: unknown;
  /** Where in the send order: ahead of everything, in the first half, or anywhere. */
  sent: 'first' | 'firstHalf' | 'anywhere';
}

/**
 * Each user joins each community with a chance, at any time; some of those who joined before the
 * quiet window leave and rejoin inside it, and some leave for good in the tail.
 */
function membershipBodies(
  random: () => number,
  ids: readonly string[],
  communities: readonly { communityId: string; displayName: string }[],
  window: { count: number; quiet: number; span: number; tail: number },
  iso: (second: number) => string,
): Special[] {
  const within = (from: number, length: number) => from + Math.floor(random() * length);
  const change = (
    kind: 'didJoin' | 'didLeave',
    community: (typeof communities)[number],
    userId: string,
    at: number,
  ): Special => ({
    envelope: {
      event: `community.${kind}`,
      data: { community, userIds: [userId], createdAt: iso(at), users: [{ userId, displayName: userId }] },
    },
    sent: kind === 'didLeave' ? 'first' : 'anywhere',
  });
  const changes: Special[] = [];
  for (const community of communities) {
    for (const userId of ids) {
      if (random() < 0.4) continue;
      const joinedAt = within(0, window.count);
      changes.push(change('didJoin', community, userId, joinedAt));
      if (joinedAt < window.quiet && random() < 0.3) {
        const leftAt = within(window.quiet, Math.floor(window.span / 2));
        changes.push(change('didLeave', community, userId, leftAt));
        changes.push(
          change('didJoin', community, userId, within(leftAt + 1, window.quiet + window.span - leftAt - 1)),
        );
      } else if (joinedAt < window.tail && random() < 0.2) {
        changes.push(change('didLeave', community, userId, within(window.tail, window.span)));
      }
    }
  }
  return changes;
}

/** One user banned for good; another banned and then unbanned (by createdAt). */
function banBodies(
  random: () => number,
  ids: readonly string[],
  count: number,
  iso: (second: number) => string,
): Special[] {
  const ban = (banned: boolean, userId: string, at: number): Special => ({
    envelope: {
      event: banned ? 'user.didGlobalBan' : 'user.didGlobalUnban',
      data: { userIds: [userId], createdAt: iso(at), users: [{ userId, displayName: userId }] },
    },
    sent: 'firstHalf',
  });
  const [kept, lifted] = [ids[1]!, ids[2]!];
  const at = Math.floor(random() * (count / 2));
  return [ban(true, kept, at), ban(true, lifted, at), ban(false, lifted, at + 1)];
}

/** mulberry32 seeded from the tag: reproducible bursts without a dependency. */
function seededRandom(tag: string): () => number {
  let seed = [...tag].reduce((hash, char) => Math.imul(hash ^ char.charCodeAt(0), 16777619), 2166136261);
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle<T>(list: T[], random: () => number): T[] {
  for (let n = list.length - 1; n > 0; n -= 1) {
    const other = Math.floor(random() * (n + 1));
    [list[n], list[other]] = [list[other]!, list[n]!];
  }
  return list;
}
