import Bull from 'bull';
import { createRedis, type RedisClient } from '../redis/create-redis.ts';
import type { RedisTarget } from '../redis/redis-target.ts';

export interface QueueConnection {
  /** A Redis URL or a cluster; on a cluster `prefix` must carry a hash tag (shared/config checks). */
  redis: RedisTarget;
  prefix: string;
}

/**
 * A bull queue with the project's connection rules. Bull needs three connections; the blocking and
 * subscriber ones must never time out requests (bull's documented requirement: maxRetriesPerRequest
 * null, enableReadyCheck false), while the command one fails fast so callers can fall back (the
 * receiver's spool) instead of waiting on ioredis's offline queue.
 */
export function createBullQueue<T>(
  name: string,
  connection: QueueConnection,
  settings?: Bull.AdvancedSettings,
): Bull.Queue<T> {
  const clients: RedisClient[] = [];
  const queue = new Bull<T>(name, {
    prefix: connection.prefix,
    ...(settings ? { settings } : {}),
    createClient: (type) => {
      const client = createRedis(connection.redis, {
        maxRetriesPerRequest: type === 'client' ? 1 : null,
        enableReadyCheck: type === 'client',
      });
      clients.push(client);
      return client;
    },
  });
  // Bull disconnects only the clients it created itself; without this, every closed queue would
  // leave its three connections reconnecting for the life of the process.
  const close = queue.close.bind(queue);
  queue.close = async (doNotWaitJobs?: boolean) => {
    try {
      await close(doNotWaitJobs);
    } finally {
      for (const client of clients) client.disconnect();
    }
  };
  return queue;
}
