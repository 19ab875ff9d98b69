import type { RedisClient } from '../../shared/redis/create-redis.ts';
import { guardedRedis } from '../../shared/redis/hung-redis-breaker.ts';
import { DAY_MS } from '../../shared/time/durations.ts';

/** A user's changes whose announcement was lost: from `since` on, resynced at `at` (epoch ms). */
export interface LostSince {
  since: number;
  at: number;
}

/**
 * Changes whose announcement was lost (a failed publish), kept per user in Redis: the earliest
 * change time lost, and when the resync that makes up for them went out. Streams open then catch
 * up from that resync itself; a stream that was away resumes later from an id older than it, and
 * catches up from `since` then (docs/live-tray.md, "How changes travel").
 */
export interface LostChanges {
  /** `userId`'s changes from `since` on were not announced; their resync goes out at `at`. */
  record(userId: string, since: number, at: number): Promise<void>;
  /** The user's lost changes, or undefined when none were in the last day. */
  of(userId: string): Promise<LostSince | undefined>;
}

/**
 * Kept as long as a stream resumes from an id (an older one gets `reset`, and reloads). The
 * earliest `since` is kept, the latest `at`: a stream that missed an earlier resync may have missed
 * the later one too, and repeating a record is harmless where losing one is not.
 */
const KEEP_MS = DAY_MS;

const RECORD = `
local since = tonumber(redis.call('HGET', KEYS[1], 'since'))
if not since or tonumber(ARGV[1]) < since then redis.call('HSET', KEYS[1], 'since', ARGV[1]) end
local at = tonumber(redis.call('HGET', KEYS[1], 'at'))
if not at or tonumber(ARGV[2]) > at then redis.call('HSET', KEYS[1], 'at', ARGV[2]) end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

export function createLostChanges(redis: RedisClient, prefix: string): LostChanges {
  const key = (userId: string) => `${prefix}:lost:${userId}`;
  // A Redis that hangs fails each call within the budget, as an unreachable one does.
  const guarded = guardedRedis(redis);
  return {
    async record(userId, since, at) {
      await guarded(() => redis.eval(RECORD, 1, key(userId), String(since), String(at), String(KEEP_MS)));
    },
    async of(userId) {
      const { since, at } = await guarded(() => redis.hgetall(key(userId)));
      return since === undefined || at === undefined ? undefined : { since: Number(since), at: Number(at) };
    },
  };
}
