import { Redis } from 'ioredis';
import { WEBHOOK_QUEUE_NAME } from '../../../shared/queue/webhook-queue.ts';

/**
 * The failed attempts bull counted, summed over the given jobs (each job hash's `attemptsMade`,
 * bull 4 layout): what an outage cost the jobs' retry budgets. A job without a hash counts 0.
 */
export async function attemptsSpent(
  redisUrl: string,
  prefix: string,
  ids: readonly string[],
): Promise<number> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  try {
    const pipeline = redis.pipeline();
    for (const id of ids) pipeline.hget(`${prefix}:${WEBHOOK_QUEUE_NAME}:${id}`, 'attemptsMade');
    const answers = (await pipeline.exec()) ?? [];
    return answers.reduce((sum, [, made]) => sum + Number(made ?? 0), 0);
  } finally {
    redis.disconnect();
  }
}
