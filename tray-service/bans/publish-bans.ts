import type { RedisClient } from '../../shared/redis/create-redis.ts';
import { banRank, type BanChange } from '../domain/ban-change.ts';
import { banKeys } from './ban-keys.ts';

/**
 * Compare and set in one script, because two workers may publish changes of one user at once:
 * a change is kept only when its rank beats the published one, so Redis ends at the newest
 * change whatever order the workers finish in (the same rule as the durable store).
 *
 * The version counter is what API instances watch, and only a whole set may create it. A Redis
 * that lost the set (restarted without its data, failed over to a replica that lacks it) has no
 * version: a change is still written then, but the counter stays absent and the script answers
 * -1, so instances keep their last loaded set (tray-service/http/auth/ban-cache.ts) until every
 * stored ban is published again. Creating it here let instances load a set of the newest ban
 * alone, every earlier ban lifted. A change kept answers the version it made.
 */
const PUBLISH = `
local lost = redis.call('EXISTS', KEYS[3]) == 0
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current and tonumber(current) >= tonumber(ARGV[2]) then
  if lost then return -1 end
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if tonumber(ARGV[2]) % 2 == 1 then
  redis.call('SADD', KEYS[2], ARGV[1])
else
  redis.call('SREM', KEYS[2], ARGV[1])
end
if lost then return -1 end
return redis.call('INCR', KEYS[3])
`;

/**
 * Once every stored ban is written: a version that is gone, or that had gone back (ARGV[2] = '1'),
 * is set to ARGV[1] (above every version the publisher saw, at least the clock's milliseconds) or
 * past its own count, whichever is more. Never counted from 0 again: that could land on the very
 * number an API instance last loaded, holding another set, which would then not load this one.
 * Answers the version.
 */
const COMPLETE = `
local version = tonumber(redis.call('GET', KEYS[1]))
if ARGV[2] == '1' or not version then
  version = math.max(tonumber(ARGV[1]), (version or 0) + 1)
  redis.call('SET', KEYS[1], string.format('%d', version))
end
return version
`;

export interface PublishedBans {
  /** Redis had lost the set: every stored ban must be published again (publishAllBans). */
  setLost: boolean;
  /**
   * A change counted a version at or below `seen`: Redis went back to an older set (a failover to
   * a replica that lagged), which its count then reaches again, each number standing for another
   * set than the one instances loaded under it. Every stored ban must be published again.
   */
  wentBack: boolean;
  /** The newest version these changes made, when one was kept into a set Redis still had. */
  version?: number;
}

/**
 * Publishes ban changes for the API's hot path (the set every API instance caches). Run after the
 * changes are stored durably; a failure throws so the job is retried, and republishing is harmless.
 * `seen` is the newest version the caller saw: each change counts one past the version Redis
 * holds, so a count at or below it is a set gone back, which only the count shows once changes
 * made after the failover have counted it up again (the version watch compares the number alone).
 */
export async function publishBans(
  redis: RedisClient,
  prefix: string,
  changes: readonly BanChange[],
  seen = 0,
): Promise<PublishedBans> {
  const keys = banKeys(prefix);
  let setLost = false;
  let wentBack = false;
  let version: number | undefined;
  for (const change of changes) {
    const answer = await redis.eval(
      PUBLISH,
      3,
      keys.rank,
      keys.banned,
      keys.version,
      change.userId,
      String(banRank(change)),
    );
    if (answer === -1) setLost = true;
    else if (typeof answer === 'number' && answer > 0) {
      if (answer <= Math.max(seen, version ?? 0)) wentBack = true;
      version = Math.max(version ?? 0, answer);
    }
  }
  return version === undefined ? { setLost, wentBack } : { setLost, wentBack, version };
}

/**
 * Publishes every stored ban (`all`, read from storage) and only then lets API instances load the
 * set: the whole set, at start-up and whenever Redis may have lost it. `seen` is the newest version
 * the caller saw: a version below it is a Redis gone back to an older set (a failover to a replica
 * that lagged), which the republish restores and then marks with a version above `seen`, so every
 * instance loads it. Answers the version the set has now.
 */
export async function publishAllBans(
  redis: RedisClient,
  prefix: string,
  all: readonly BanChange[],
  seen = 0,
): Promise<number> {
  const keys = banKeys(prefix);
  const before = await redis.get(keys.version);
  const wentBack = before !== null && Number(before) < seen;
  await publishBans(redis, prefix, all);
  const fresh = Math.max(Date.now(), seen + 1);
  return Number(await redis.eval(COMPLETE, 1, keys.version, String(fresh), wentBack ? '1' : '0'));
}
