import type Bull from 'bull';
import { createBullQueue, type QueueConnection } from './create-bull-queue.ts';

/** The one queue between receiver and worker. README, "Queue", documents name and options. */
export const WEBHOOK_QUEUE_NAME = 'webhook-events';

/** What the receiver enqueues for each verified delivery. */
export interface WebhookJobData {
  /** Lowercase hex SHA-256 of the raw body; also the bull job id. */
  dedupeKey: string;
  /** Name of the webhook whose secret verified the signature. */
  webhook: string;
  /** ISO 8601 time the receiver accepted the delivery. */
  receivedAt: string;
  event: string;
  data: Record<string, unknown>;
}

/**
 * Job options for every webhook job. Jobs are retried with exponential backoff (1 s, 2 s, 4 s, ...)
 * so a MongoDB outage of a few minutes costs nothing; after the last attempt the job stays in the
 * failed set (the dead letter) until `scripts/replay` moves it back.
 */
export const webhookJobOptions: Bull.JobOptions = {
  attempts: 10,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: { age: 24 * 3600, count: 10_000 },
  removeOnFail: false,
};

export type { QueueConnection };

export function createWebhookQueue(
  connection: QueueConnection,
  name = WEBHOOK_QUEUE_NAME,
): Bull.Queue<WebhookJobData> {
  return createBullQueue<WebhookJobData>(name, connection);
}
