import type { RedisClient } from '../../shared/redis/create-redis.ts';
import { guardedRedis } from '../../shared/redis/hung-redis-breaker.ts';
import { DAY_MS } from '../../shared/time/durations.ts';
import type { RemovedRecord } from '../storage/port.ts';
import { shardOf } from './change-channels.ts';
import { inFlightBatches } from './in-flight-batches.ts';
import { removalsOf, type RemovedChange } from './live-change.ts';

/**
 * The records removed from each user's tray lately, kept in Redis, so that a stream that was away
 * when a record went is told `removed` when it resumes (docs/live-tray.md, "Event ids and
 * resuming"). Storage keeps nothing of a removed record, and a stream's id keeps no removal either:
 * without this log, a client that reconnected after a removal would show the record until it
 * reloaded its history.
 */
export interface RemovalLog {
  /** These records were removed at `at` (epoch ms). */
  record(removed: readonly RemovedRecord[], at: number): Promise<void>;
  /** The keys of `userId`'s records removed at or after `since`, oldest first. */
  since(userId: string, since: number): Promise<string[]>;
}

/**
 * As long as a stream resumes from an id (an older one gets `reset` and reloads), and a minute
 * more: a resuming stream looks back its cursor's settle window too.
 */
export const REMOVAL_KEEP_MS = DAY_MS + 60_000;

/**
 * The removals kept per user: the newest. A user whose records are removed faster than this in a
 * day (a spammer's reactions deleted on every post of theirs) gets only these on a resume.
 */
export const REMOVALS_PER_USER = 1_000;

/**
 * Users one script logs, and scripts in flight at once: a call takes about 12 us a user, so each
 * waits at most about 25 ms behind the others and what else the connection carries (rate limits,
 * tickets, publishes) no longer than that; eight keep Redis busy (a script takes ~3 ms, the round
 * trip a tenth of that). Every shard's users in one script each, all at once, a removal of 300,000
 * records ran past a call's budget of 1 s and failed whole, for good; 32 in flight (100 ms behind)
 * still ran past it on a CI host ten times slower.
 */
const USERS_PER_SCRIPT = 256;
const SCRIPTS_IN_FLIGHT = 8;

/**
 * One call per shard touched: KEYS are the users' logs, ARGV the time, the keep window, the
 * bound, and a JSON array holding each KEYS' record keys. A key removed again keeps its latest time
 * (GT): two workers' calls may arrive out of order.
 */
const RECORD = `
local at = tonumber(ARGV[1])
local lists = cjson.decode(ARGV[4])
for i, key in ipairs(KEYS) do
  for _, id in ipairs(lists[i]) do redis.call('ZADD', key, 'GT', at, id) end
  redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. (at - tonumber(ARGV[2])))
  redis.call('ZREMRANGEBYRANK', key, 0, -tonumber(ARGV[3]) - 1)
  redis.call('PEXPIRE', key, ARGV[2])
end
return #KEYS`;

/**
 * Keys hash-tagged by the users' change shard (STREAM_REDIS_PREFIX holds no braces), so one call
 * writes the logs of many users on a Redis Cluster: a post deleted in a large community removes a
 * record of each member.
 */
const logKey = (prefix: string, userId: string) => `${prefix}:removed:{${shardOf(userId)}}:${userId}`;

export function createRemovalLog(redis: RedisClient, prefix: string): RemovalLog {
  // A Redis that hangs fails each call within the budget, as an unreachable one does.
  const guarded = guardedRedis(redis);
  return {
    async record(removed, at) {
      const byShard = new Map<number, RemovedChange[]>();
      for (const change of removalsOf(removed)) {
        const shard = shardOf(change.userId);
        const users = byShard.get(shard);
        if (users) users.push(change);
        else byShard.set(shard, [change]);
      }
      const scripts = [...byShard.values()].flatMap((users) =>
        Array.from({ length: Math.ceil(users.length / USERS_PER_SCRIPT) }, (_, i) =>
          users.slice(i * USERS_PER_SCRIPT, (i + 1) * USERS_PER_SCRIPT),
        ),
      );
      await inFlightBatches(
        scripts,
        async (users) =>
          void (await guarded(() =>
            redis.eval(
              RECORD,
              users.length,
              ...users.map((change) => logKey(prefix, change.userId)),
              String(at),
              String(REMOVAL_KEEP_MS),
              String(REMOVALS_PER_USER),
              JSON.stringify(users.map((change) => change.ids)),
            ),
          )),
        SCRIPTS_IN_FLIGHT,
      );
    },
    async since(userId, since) {
      return guarded(() => redis.zrangebyscore(logKey(prefix, userId), since, '+inf'));
    },
  };
}
