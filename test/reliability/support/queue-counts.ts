import { WEBHOOK_QUEUE_NAME } from '../../../shared/queue/webhook-queue.ts';
import { createRedis } from '../../../shared/redis/create-redis.ts';
import type { RedisTarget } from '../../../shared/redis/redis-target.ts';

export interface QueueCounts {
  /** Jobs bull still has to run: waiting, active or delayed (a retry's backoff). */
  pending: number;
  failed: number;
  completed: number;
}

/** The webhook queue's job counts, read straight from bull's keys (bull 4 layout). */
export async function queueCounts(redisUrl: RedisTarget, prefix: string): Promise<QueueCounts> {
  const redis = createRedis(redisUrl, { maxRetriesPerRequest: 3 });
  const base = `${prefix}:${WEBHOOK_QUEUE_NAME}`;
  try {
    const [wait, active, delayed, failed, completed] = await Promise.all([
      redis.llen(`${base}:wait`),
      redis.llen(`${base}:active`),
      redis.zcard(`${base}:delayed`),
      redis.zcard(`${base}:failed`),
      redis.zcard(`${base}:completed`),
    ]);
    return { pending: wait + active + delayed, failed, completed };
  } finally {
    redis.disconnect();
  }
}
