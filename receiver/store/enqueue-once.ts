import type Bull from 'bull';
import type { Redis } from 'ioredis';
import { webhookJobOptions, type WebhookJobData } from '../../shared/queue/webhook-queue.ts';

export interface EnqueueTarget {
  readonly queue: Bull.Queue<WebhookJobData>;
  readonly redis: Redis;
  /** Key prefix of the dedupe marks (the queue prefix keeps deployments and test suites apart). */
  readonly markPrefix: string;
  readonly dedupeSeconds: number;
}

export type EnqueueOutcome = 'queued' | 'duplicate';

export const dedupeMarkKey = (markPrefix: string, key: string) => `${markPrefix}:webhook-dedupe:${key}`;

/**
 * Puts one event into the queue unless it was queued before (README, "Receiver": dedupe).
 * Order matters: check the mark, add the job, and only then write the mark. A mark written before
 * the event is durable would, after a crash or failed spool write in between, make the platform's
 * redelivery look like a duplicate and lose the event. Two identical deliveries racing past the
 * check both add with the same job id, and bull keeps one job.
 */
export async function enqueueOnce(target: EnqueueTarget, job: WebhookJobData): Promise<EnqueueOutcome> {
  const mark = dedupeMarkKey(target.markPrefix, job.dedupeKey);
  if ((await target.redis.exists(mark)) === 1) return 'duplicate';
  await target.queue.add(job, { ...webhookJobOptions, jobId: job.dedupeKey });
  await target.redis.set(mark, '1', 'EX', target.dedupeSeconds);
  return 'queued';
}
