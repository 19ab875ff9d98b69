import { Redis, type RedisOptions } from 'ioredis';

/**
 * Redis connection for commands that must fail fast when Redis is down (readiness probes,
 * rate limits, dedupe): a bounded retry per request instead of ioredis's default of queueing forever.
 */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    enableOfflineQueue: true,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    ...options,
  });
}

export async function pingRedis(redis: Redis): Promise<void> {
  const answer = await redis.ping();
  if (answer !== 'PONG') throw new Error(`unexpected PING answer ${answer}`);
}
