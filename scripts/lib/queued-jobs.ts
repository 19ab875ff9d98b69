import { Redis } from 'ioredis';
import { WEBHOOK_QUEUE_NAME } from '../../shared/queue/webhook-queue.ts';

/** Jobs waiting in the webhook queue under `prefix` (its wait list): how deep a bench's backlog is. */
export async function queuedJobs(redisUrl: string, prefix: string): Promise<number> {
  const client = new Redis(redisUrl);
  try {
    return await client.llen(`${prefix}:${WEBHOOK_QUEUE_NAME}:wait`);
  } finally {
    client.disconnect();
  }
}
