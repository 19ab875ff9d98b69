import type { RedisClient } from './create-redis.ts';
import { exitWithMessage, type RedisRefusalOptions } from './redis-refusal.ts';
import { watchRedisNodes } from './watch-redis-nodes.ts';

/**
 * The problem with a Redis whose `maxmemory-policy` (from `INFO memory`) is not `noeviction`, as one
 * operator-readable line, or undefined when the policy is safe or not reported. Any other policy lets
 * Redis delete keys under memory pressure: queued events, bull's job hashes and dedupe marks would
 * vanish without an error (bull's documented requirement; RELIABILITY.md).
 */
export function evictionProblem(info: string): string | undefined {
  const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
  if (policy === undefined || policy === 'noeviction') return undefined;
  return (
    `Redis maxmemory-policy is "${policy}", which may evict queued events; ` +
    'run CONFIG SET maxmemory-policy noeviction (and set it in redis.conf), then restart'
  );
}

/**
 * Checks the eviction policy whenever `redis` (re)connects, on every cluster master
 * (watchRedisNodes): at start-up, so start-up is refused before anything is accepted, and after
 * every reconnect. A server that does not report the policy, or refuses INFO, is logged and accepted.
 */
export async function refuseEvictingRedis(
  redis: RedisClient,
  options: RedisRefusalOptions = {},
): Promise<void> {
  const onRefused = options.onRefused ?? exitWithMessage;
  await watchRedisNodes(
    redis,
    async (node, where) => {
      const info = await node.info('memory');
      if (!/^maxmemory_policy:/m.test(info)) {
        options.logger?.warn(
          { node: where },
          'Redis does not report maxmemory_policy; make sure it never evicts keys',
        );
      }
      const problem = evictionProblem(info);
      if (problem !== undefined) onRefused(where === '' ? problem : `${problem} (master ${where})`);
    },
    (error, where) =>
      options.logger?.warn({ err: error.message, node: where }, 'could not read the Redis eviction policy'),
    { startupWaitMs: options.startupWaitMs },
  );
}
