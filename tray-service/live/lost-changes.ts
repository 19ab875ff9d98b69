import type { RedisClient } from '../../shared/redis/create-redis.ts';
import { guardedRedis } from '../../shared/redis/hung-redis-breaker.ts';
import { DAY_MS } from '../../shared/time/durations.ts';

/** A user's changes whose announcement was lost: from `since` on, resynced at `at` (epoch ms). */
export interface LostSince {
  since: number;
  at: number;
}

/**
 * Changes whose announcement was lost (a failed publish), kept per user in Redis: each resync that
 * made up for some, with the earliest change time it covered. Streams open then catch up from that
 * resync itself; a stream that was away resumes later from an id older than it, and catches up
 * from its `since` then (docs/live-tray.md, "How changes travel").
 */
export interface LostChanges {
  /** `userId`'s changes from `since` on were not announced; their resync goes out at `at`. */
  record(userId: string, since: number, at: number): Promise<void>;
  /**
   * The user's resyncs, oldest first (none when there were none): those of the day before the
   * latest, which may reach two days back; a stream away that long is `reset` anyway.
   */
  of(userId: string): Promise<LostSince[]>;
}

/** Kept as long as a stream resumes from an id (an older one gets `reset`, and reloads). */
const KEEP_MS = DAY_MS;

/**
 * Resyncs kept per user. Each is kept apart (it was one pair, the earliest `since` and the latest
 * `at`, whose expiry every loss renewed: a user losing a publish once a day kept the first loss's
 * `since` for good, and every later resync sent their whole tray since then again). Past this
 * many in a day the two oldest become one, the earlier `since` and the later `at`: a stream may
 * get records again, never miss one.
 */
const MAX_KEPT = 32;

// A sorted set by `at`, each member `since@at`.
const RECORD = `
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1] .. '@' .. ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (tonumber(ARGV[2]) - tonumber(ARGV[3])))
while redis.call('ZCARD', KEYS[1]) > tonumber(ARGV[4]) do
  local two = redis.call('ZRANGE', KEYS[1], 0, 1)
  local since1 = tonumber(string.match(two[1], '^([^@]+)@'))
  local since2, at2 = string.match(two[2], '^([^@]+)@(.+)$')
  redis.call('ZREM', KEYS[1], two[1], two[2])
  redis.call('ZADD', KEYS[1], at2, string.format('%d', math.min(since1, tonumber(since2))) .. '@' .. at2)
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

export function createLostChanges(redis: RedisClient, prefix: string): LostChanges {
  const key = (userId: string) => `${prefix}:lost-resyncs:${userId}`;
  // The one pair an earlier version kept (a hash of `since` and `at`), read for the day it lives
  // on after an upgrade, never written.
  const earlierKey = (userId: string) => `${prefix}:lost:${userId}`;
  // A Redis that hangs fails each call within the budget, as an unreachable one does.
  const guarded = guardedRedis(redis);
  return {
    async record(userId, since, at) {
      await guarded(() =>
        redis.eval(RECORD, 1, key(userId), String(since), String(at), String(KEEP_MS), String(MAX_KEPT)),
      );
    },
    async of(userId) {
      const [members, earlier] = await Promise.all([
        guarded(() => redis.zrange(key(userId), 0, -1)),
        guarded(() => redis.hgetall(earlierKey(userId))),
      ]);
      const kept = members.map((member) => {
        const [since = '', at = ''] = member.split('@');
        return { since: Number(since), at: Number(at) };
      });
      return earlier.since === undefined || earlier.at === undefined
        ? kept
        : [{ since: Number(earlier.since), at: Number(earlier.at) }, ...kept];
    },
  };
}
