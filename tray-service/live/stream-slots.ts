import { createHash, randomUUID } from 'node:crypto';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import { guardedRedis } from '../../shared/redis/hung-redis-breaker.ts';

/**
 * An open stream holds a lease in its user's sorted set (member: stream id, score: lease end).
 * One script trims expired leases, counts and adds, so two instances opening the user's last free
 * slot at once cannot both take it. A crashed instance's leases lapse after LEASE_MS.
 *
 * At the limit the new stream takes the place of the user's oldest (the smallest id: ids begin
 * with their opening time): a stream whose client vanished without closing its connection (a phone
 * changing networks) is renewed by its heartbeat as long as the server's TCP keeps it, up to a
 * quarter of an hour, and must not lock its user out meanwhile. A replaced stream's member stays
 * for a lease with a negative score (minus the time it goes: markOf), a mark its renewal reads: the
 * stream's holder, on whichever instance, ends it then if the hub's announcement did not reach it.
 * Expired leases score from 0 to now, expired marks from -now to 0: one trim drops both.
 *
 * A reconnect may name the stream its client held before (`replaces`): one the client gave up as
 * silent, which its server may keep open for that quarter of an hour. That one gives its place
 * first, whatever the count: left open, it would keep its slot, and being older than the user's
 * other tabs' later streams, a healthy one would be replaced in its stead. Only a member of this
 * user's set that is still open counts; any other id changes nothing.
 *
 * The same acquire run again (ioredis sends a command again when its connection dropped before the
 * answer came) finds its stream counted already: it changes nothing and answers the streams the
 * first run marked (their marks carry this acquire's score), instead of replacing one more.
 *
 * ARGV: now, the new lease's end, the limit, the new stream's id, the lease, the mark's score, the
 * stream the new one replaces ('' for none). Returns the ids of the streams replaced (the named
 * one, then as many as take the user back under the limit, which may have been lowered since they
 * opened).
 */
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-' .. ARGV[1], ARGV[1])
if redis.call('ZSCORE', KEYS[1], ARGV[4]) then
  return redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[6], ARGV[6])
end
local replaced = {}
if ARGV[7] ~= '' then
  local score = redis.call('ZSCORE', KEYS[1], ARGV[7])
  if score and tonumber(score) > tonumber(ARGV[1]) then
    replaced[1] = ARGV[7]
    redis.call('ZADD', KEYS[1], ARGV[6], ARGV[7])
  end
end
local open = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf')
table.sort(open)
for i = 1, #open - tonumber(ARGV[3]) + 1 do
  replaced[#replaced + 1] = open[i]
  redis.call('ZADD', KEYS[1], ARGV[6], open[i])
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return replaced
`;

/**
 * Only open streams are renewed (the hub renews those it holds), so a lease that lapsed while its
 * stream stayed open (Redis out of reach for longer than a lease, or restarted without its data) is
 * added again: otherwise that stream would no longer count, and STREAMS_PER_USER would stop holding.
 * A replaced stream's is not: 0 tells its holder to end it.
 */
const RENEW = `
local score = redis.call('ZSCORE', KEYS[1], ARGV[2])
if score and tonumber(score) < 0 then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`;

/**
 * Gives streams back the places an acquire marked as taken, when the stream that took them never
 * opened (its client gone while it was authorised, or the instance shutting down), and removes
 * that stream's own lease in the same step: apart, another stream opening in between would count
 * neither and the user would end up above the limit. Only a mark still standing is lifted, so a
 * stream since ended or released stays gone. ARGV: the lease's end, the stream that never opened,
 * then the stream ids.
 */
const RESTORE = `
redis.call('ZREM', KEYS[1], ARGV[2])
for i = 3, #ARGV do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if score and tonumber(score) < 0 then redis.call('ZADD', KEYS[1], ARGV[1], ARGV[i]) end
end
return 0
`;

/**
 * Undoes an acquire whose answer never came (its connection dropped with the command sent: the
 * script may have run): the new stream's lease goes, and the streams it marked replaced (the
 * marks carry its score) get a lease again. ARGV: the lease's end, the new stream, the mark's score.
 */
const UNDO = `
redis.call('ZREM', KEYS[1], ARGV[2])
local marked = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[3], ARGV[3])
for i = 1, #marked do redis.call('ZADD', KEYS[1], ARGV[1], marked[i]) end
return #marked
`;

/** Distinct fractions of a millisecond a mark may carry (markOf). */
const MARK_FRACTIONS = 4_096;

/**
 * The score an acquire marks the streams it replaces with: minus their lease's end, less a fraction
 * of a millisecond of the new stream's own (from its id, so the same acquire sent again marks
 * alike). The undo of a failed acquire finds its marks by score, and another acquire of the user
 * in the same millisecond (two tabs reconnecting) must not share it. Multiples of 2^-12, which a
 * double holds exactly next to today's times.
 */
function markOf(leaseEnd: number, streamId: string): string {
  const own = createHash('sha256').update(streamId).digest().readUInt32BE(0) % (MARK_FRACTIONS - 1);
  return String(-(leaseEnd + (own + 1) / MARK_FRACTIONS));
}

/** How often an undo of a failed acquire is tried again while Redis does not take it. */
const UNDO_RETRY_MS = 500;

export interface StreamSlots {
  readonly limit: number;
  /**
   * Takes one of the user's STREAMS_PER_USER slots, always: the place of `replaces` (the client's
   * previous stream) if the user still holds it, and at the limit the place of the user's oldest.
   * Returns the ids of the streams replaced, which their holders are to end.
   */
  acquire(userId: string, streamId: string, replaces?: string): Promise<string[]>;
  /**
   * Extends the lease of an open stream (every heartbeat), taking it again if it lapsed; false when
   * a newer stream took its place (the holder ends it).
   */
  renew(userId: string, streamId: string): Promise<boolean>;
  /**
   * `never` took the places of `streamIds` (acquire) and never opened: its own place goes, and they
   * keep theirs after all. A holder whose renewal read the mark in between has ended its stream
   * already.
   */
  restore(userId: string, never: string, streamIds: readonly string[]): Promise<void>;
  release(userId: string, streamId: string): Promise<void>;
}

export interface StreamSlotOptions {
  prefix: string;
  limit: number;
  /** How long a lease lives without renewal: a few heartbeats. */
  leaseMs: number;
  now?: () => number;
}

/**
 * A new stream's id: its opening time (base 36, fixed width) first, so the user's oldest stream is
 * the smallest id on every instance (as close as their clocks agree), then a random UUID.
 */
export function newStreamId(openedAt: number): string {
  return `${Math.max(0, Math.floor(openedAt)).toString(36).padStart(9, '0')}-${randomUUID()}`;
}

export function createStreamSlots(redis: RedisClient, options: StreamSlotOptions): StreamSlots {
  const now = options.now ?? Date.now;
  const key = (userId: string) => `${options.prefix}:streams:${userId}`;
  // A Redis that hangs fails each call within the budget, as an unreachable one does.
  const guarded = guardedRedis(redis);
  /**
   * Tried until Redis takes it, for as long as a lease lives: past that the new stream's lease has
   * lapsed, and the streams marked have had their renewals read the mark. Never rejects.
   */
  const undo = async (userId: string, streamId: string, mark: string) => {
    const until = now() + options.leaseMs;
    for (;;) {
      try {
        await guarded(() =>
          redis.eval(UNDO, 1, key(userId), String(now() + options.leaseMs), streamId, mark),
        );
        return;
      } catch {
        if (now() + UNDO_RETRY_MS > until) return;
        await new Promise((resolve) => setTimeout(resolve, UNDO_RETRY_MS).unref());
      }
    }
  };
  return {
    limit: options.limit,
    async acquire(userId, streamId, replaces) {
      const at = now();
      // A lease from now: the replaced stream's holder renews within a heartbeat.
      const mark = markOf(at + options.leaseMs, streamId);
      let replaced: unknown;
      try {
        // Not given the budget: a script given up on still runs once Redis answers, and would hold
        // a place for a stream that never opened (and mark the user's oldest stream replaced).
        replaced = await redis.eval(
          ACQUIRE,
          1,
          key(userId),
          String(at),
          String(at + options.leaseMs),
          String(options.limit),
          streamId,
          String(options.leaseMs),
          mark,
          replaces ?? '',
        );
      } catch (error) {
        // Its connection dropped with the script sent (the hung-Redis breaker drops it; a reconnect
        // past its retries fails what it held): it may have run, and the user's oldest stream,
        // marked, would end at its next renewal for a stream that never opened.
        void undo(userId, streamId, mark);
        throw error;
      }
      return Array.isArray(replaced) ? replaced.filter((id): id is string => typeof id === 'string') : [];
    },
    async renew(userId, streamId) {
      const kept = await guarded(() =>
        redis.eval(RENEW, 1, key(userId), String(now() + options.leaseMs), streamId, String(options.leaseMs)),
      );
      return kept === 1;
    },
    async restore(userId, never, streamIds) {
      await guarded(() =>
        redis.eval(RESTORE, 1, key(userId), String(now() + options.leaseMs), never, ...streamIds),
      );
    },
    async release(userId, streamId) {
      await guarded(() => redis.zrem(key(userId), streamId));
    },
  };
}
