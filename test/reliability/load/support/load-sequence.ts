import { dedupeKey } from '../../../../receiver/dedupe-key.ts';
import { channelDidCreate } from '../../../receiver/support/signed-request.ts';
import type { ExpectedDelivery } from './expected-tray.ts';
import { socialBodies, type LoadWorld } from './social-bodies.ts';

export interface LoadEvent {
  /** The dedupe key of the body (= bull job id = the stored event's key). */
  readonly id: string;
  readonly body: string;
  readonly event: string;
}

export interface LoadSequence {
  /** Every event in sending order; the last one is `last.event`. */
  readonly events: readonly LoadEvent[];
  /** What the tray must do for the sequence: one entry per (record, actor, action). */
  readonly deliveries: readonly ExpectedDelivery[];
  /** The final event: a comment whose record change shows the whole sequence went through. */
  readonly last: { event: LoadEvent; recordKey: string; userId: string; actionId: string };
  /** Events per kind, for the figures. */
  readonly mix: Record<string, number>;
  /** Every user the sequence names (its 200 users and the last actor): the trays the check reads. */
  readonly users: readonly string[];
}

/** Small deterministic PRNG (mulberry32): the same seed gives the same sequence on every run. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * A community platform's webhook traffic (docs/contract.md#event-catalogue): about a third store-only events
 * (channels, follows, flags), the rest comments, replies, reactions to posts and comments, mentions
 * and community posts fanned out to the members, on a few hundred posts whose popularity is skewed
 * (hot posts collect many actors, so records are grouped and updated, not only created). Event 0
 * is the community's join; event `count - 1` is a comment by a user seen nowhere else on the hottest
 * post, so its record changes in a way only that event explains.
 */
export function buildLoadSequence(options: {
  count: number;
  tag: string;
  startAt: number;
  seed?: number;
}): LoadSequence {
  const next = random(options.seed ?? 8);
  const world: LoadWorld = { tag: options.tag, users: 200, posts: 400, members: 8, comments: [] };
  const social = socialBodies(world);
  const events: LoadEvent[] = [];
  const deliveries: ExpectedDelivery[] = [];
  const mix: Record<string, number> = {};
  const add = (event: string, body: string, expected: readonly ExpectedDelivery[] = []) => {
    events.push({ id: dedupeKey(Buffer.from(body)), body, event });
    deliveries.push(...expected);
    mix[event] = (mix[event] ?? 0) + 1;
  };
  const user = () => social.uid(Math.floor(next() * world.users));
  // Squaring skews towards low indexes: post 0 is the hottest.
  const post = () => Math.floor(next() * next() * world.posts);
  // Replies and reactions go to the 200 latest comments: people answer what is on screen.
  const recentComment = () => {
    const from = Math.max(0, world.comments.length - 200);
    return world.comments[from + Math.floor(next() * (world.comments.length - from))]!;
  };

  add('community.didJoin', social.join(options.startAt));
  for (let n = 1; n < options.count - 1; n += 1) {
    const at = options.startAt + n;
    const r = next();
    if (r < 0.2) add('channel.didCreate', channelDidCreate(`${options.tag}-ch-${n}`));
    else if (r < 0.3) add('follow.didCreate', social.follow(n, user(), user(), at));
    else if (r < 0.35) add('post.didFlag', social.flag(n, post(), user(), at));
    else if (r < 0.63) add('comment.didCreate', ...social.comment(n, user(), post(), at, next() < 0.12));
    else if (r < 0.7 && world.comments.length > 0)
      add('comment.didCreate', ...social.reply(n, user(), recentComment(), at));
    else if (r < 0.88) add('reaction.didAdd', ...social.reactToPost(n, user(), post(), at));
    else if (r < 0.95 && world.comments.length > 0)
      add('reaction.didAdd', ...social.reactToComment(n, user(), recentComment(), at));
    else if (r < 0.99 || n < 500) add('post.didCreate', ...social.userFeedPost(n, user(), user(), at));
    // Community posts only once the join (event 0) is long processed: a member's fan-out starts at
    // the join (docs/contract.md#communitydidjoin-communitydidleave), and the worker runs several jobs at once.
    else add('post.didCreate', ...social.communityPost(n, Math.floor(next() * world.members), at));
  }
  const lastActor = `${options.tag}-last`;
  const [body, expected] = social.comment(
    options.count - 1,
    lastActor,
    0,
    options.startAt + options.count,
    false,
  );
  add('comment.didCreate', body, expected);
  const { key, userId, actionId } = expected[0]!;
  const users = [...Array.from({ length: world.users }, (_, n) => social.uid(n)), lastActor];
  return {
    events,
    deliveries,
    last: { event: events.at(-1)!, recordKey: key, userId, actionId },
    mix,
    users,
  };
}
