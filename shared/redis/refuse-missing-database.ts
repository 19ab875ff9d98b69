import { Redis } from 'ioredis';
import type { RedisClient } from './create-redis.ts';
import { exitWithMessage, type RedisRefusalOptions } from './redis-refusal.ts';
import { watchRedisNodes } from './watch-redis-nodes.ts';

/**
 * Refuses a server that will not select the database REDIS_URL names, whenever `redis` (re)connects.
 * ioredis selects it as it connects, and when the server refuses (a managed Redis with database 0
 * only, a number past its `databases`) it only emits an error and goes on, on database 0: two
 * deployments kept apart by their database numbers shared every queue, ban and stream key. A
 * cluster has database 0 only, and its URLs name none.
 */
export async function refuseMissingDatabase(
  redis: RedisClient,
  options: RedisRefusalOptions = {},
): Promise<void> {
  if (!(redis instanceof Redis)) return;
  const database = redis.options.db ?? 0;
  if (database === 0) return;
  const onRefused = options.onRefused ?? exitWithMessage;
  await watchRedisNodes(
    redis,
    async (node) => {
      try {
        await node.select(database);
      } catch (error) {
        if ((error as Error).name !== 'ReplyError') throw error;
        onRefused(
          `REDIS_URL names database ${database}, which this Redis refuses (${(error as Error).message}): ` +
            'its commands would go to database 0, among any other deployment there; name one it has ' +
            '(0 to its `databases` setting less one; a managed or cluster-mode Redis has 0 only)',
        );
      }
    },
    (error) => options.logger?.warn({ err: error.message }, 'could not check the Redis database'),
    { startupWaitMs: options.startupWaitMs },
  );
}
