import type { RedisClient } from '../../shared/redis/create-redis.ts';
import { banRank, type BanChange } from '../domain/ban-change.ts';
import { banKeys } from './ban-keys.ts';

/**
 * Compare and set in one script, because two workers may publish changes of one user at once:
 * a change is kept only when its rank beats the published one, so Redis ends at the newest
 * change whatever order the workers finish in (the same rule as the durable store). A version
 * counter that is gone (a Redis that lost the set) starts again from the clock's milliseconds,
 * never from 0: counting from 0 again could land on the very number an API instance last loaded,
 * which would then not load the set again.
 */
const PUBLISH = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current and tonumber(current) >= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if tonumber(ARGV[2]) % 2 == 1 then
  redis.call('SADD', KEYS[2], ARGV[1])
else
  redis.call('SREM', KEYS[2], ARGV[1])
end
redis.call('SET', KEYS[3], ARGV[3], 'NX')
redis.call('INCR', KEYS[3])
return 1
`;

/**
 * Publishes ban changes for the API's hot path (the set every API instance caches). Run after the
 * changes are stored durably; a failure throws so the job is retried, and republishing is harmless.
 */
export async function publishBans(
  redis: RedisClient,
  prefix: string,
  changes: readonly BanChange[],
): Promise<void> {
  const keys = banKeys(prefix);
  for (const change of changes) {
    await redis.eval(
      PUBLISH,
      3,
      keys.rank,
      keys.banned,
      keys.version,
      change.userId,
      String(banRank(change)),
      String(Date.now()),
    );
  }
}
