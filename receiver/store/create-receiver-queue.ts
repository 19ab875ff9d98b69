import Bull from 'bull';
import { createRedis, type RedisClient } from '../../shared/redis/create-redis.ts';
import type { RedisTarget } from '../../shared/redis/redis-target.ts';
import { WEBHOOK_QUEUE_NAME, type WebhookJobData } from '../../shared/queue/webhook-queue.ts';

export interface ReceiverQueue {
  readonly queue: Bull.Queue<WebhookJobData>;
  /** The connection bull adds jobs with; the dedupe marks use it too. */
  readonly client: RedisClient;
  close(): Promise<void>;
}

/**
 * The receiver's producer-only bull queue. Its command connection has no offline queue and one try
 * per command: while Redis is down an add fails at once (and the event goes to the spool) instead
 * of waiting in ioredis's memory and landing in the queue later behind the spool's back. A command
 * already on the wire may still complete after the receiver gave up on it; the job id (the dedupe
 * key) makes the spool drainer's later add of the same event a no-op.
 */
export function createReceiverQueue(redis: RedisTarget, prefix: string): ReceiverQueue {
  const client = createRedis(redis, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
    // No auto-pipelining: the receiver already sends one script call per turn of the event loop
    // (batchPerTick), and ioredis's pipeline per turn only added a Pipeline object, its promise
    // plumbing and a second pass over the command (BENCHMARKS.md, "Receiver").
  });
  const others: RedisClient[] = [];
  const queue = new Bull<WebhookJobData>(WEBHOOK_QUEUE_NAME, {
    prefix,
    createClient: (type) => {
      if (type === 'client') return client;
      // Never used by a producer, but bull requires these options if it ever asks.
      const other = createRedis(redis, { maxRetriesPerRequest: null, enableReadyCheck: false });
      other.on('error', () => undefined);
      others.push(other);
      return other;
    },
  });
  return {
    queue,
    client,
    async close() {
      await queue.close().catch(() => undefined);
      for (const connection of [client, ...others]) connection.disconnect();
    },
  };
}
