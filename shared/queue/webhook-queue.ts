import type Bull from 'bull';
import {
  CAPPED_EXPONENTIAL,
  cappedExponentialDelay,
  type CappedExponentialOptions,
} from './capped-exponential-backoff.ts';
import { createBullQueue, type QueueConnection } from './create-bull-queue.ts';

/** The one queue between receiver and worker. docs/receiver.md#queue documents name and options. */
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
 * A webhook job's data already serialised: the JSON of a WebhookJobData on one line (the spool is
 * one job a line), with its key. The receiver builds the text without building the object
 * (receiver/delivery-job.ts); everything else encodes a WebhookJobData with encodeWebhookJob.
 */
export interface EncodedWebhookJob {
  readonly dedupeKey: string;
  readonly json: string;
}

export const encodeWebhookJob = (job: WebhookJobData): EncodedWebhookJob => ({
  dedupeKey: job.dedupeKey,
  json: JSON.stringify(job),
});

/**
 * Waits between attempts of a webhook job: 1 s, 2 s, 4 s, 8 s, 16 s, then every 30 s, each less up
 * to a fifth at random (RETRY_JITTER; the tray worker's TRAY_RETRY_FIRST_DELAY_MS and
 * TRAY_RETRY_MAX_DELAY_MS change them).
 */
export const webhookRetryDelays = { firstMs: 1_000, maxMs: 30_000 } as const;

/**
 * Job options for every webhook job. 20 attempts with capped exponential backoff
 * (webhookRetryDelays) span 6 to 7.5 minutes. A storage outage costs no attempts at all: the
 * worker stops taking jobs until the storage answers (tray-service/worker/storage-gate.ts). After the last attempt the job stays
 * in the failed set (the dead letter) until `scripts/replay` moves it back.
 */
export const webhookJobOptions: Bull.JobOptions = {
  attempts: 20,
  backoff: { type: CAPPED_EXPONENTIAL },
  removeOnComplete: { age: 24 * 3600, count: 10_000 },
  removeOnFail: false,
};

export type { QueueConnection };

export function createWebhookQueue(
  connection: QueueConnection,
  name = WEBHOOK_QUEUE_NAME,
  retryDelays: CappedExponentialOptions = webhookRetryDelays,
): Bull.Queue<WebhookJobData> {
  // Every instance registers the strategy: bull computes a retry's delay in the process whose
  // worker ran the failed attempt, from the job's stored `backoff.type`.
  return createBullQueue<WebhookJobData>(name, connection, {
    backoffStrategies: {
      [CAPPED_EXPONENTIAL]: (attemptsMade) => cappedExponentialDelay(attemptsMade, retryDelays),
    },
  });
}
