import Bull from 'bull';
import { Redis } from 'ioredis';

export interface QueueConnection {
  redisUrl: string;
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
  const clients: Redis[] = [];
  const queue = new Bull<T>(name, {
    prefix: connection.prefix,
    ...(settings ? { settings } : {}),
    createClient: (type) => {
      const client = new Redis(connection.redisUrl, {
        maxRetriesPerRequest: type === 'client' ? 1 : null,
        enableReadyCheck: type === 'client',
        connectTimeout: 2_000,
        retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
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
