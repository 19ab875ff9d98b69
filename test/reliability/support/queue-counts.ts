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
    // One transaction: read one by one, a job moving between the lists (a delay's end, a stalled
    // job put back) between two reads was counted in neither, and a queue still working read empty.
    const replies = await redis
      .multi()
      .llen(`${base}:wait`)
      .llen(`${base}:active`)
      .zcard(`${base}:delayed`)
      .zcard(`${base}:failed`)
      .zcard(`${base}:completed`)
      .exec();
    const [wait = 0, active = 0, delayed = 0, failed = 0, completed = 0] = (replies ?? []).map(
      ([error, count]) => {
        if (error) throw error;
        return Number(count);
      },
    );
    if (replies?.length !== 5) throw new Error('the queue counts transaction was discarded');
    return { pending: wait + active + delayed, failed, completed };
  } finally {
    redis.disconnect();
  }
}
