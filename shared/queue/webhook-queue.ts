import type Bull from 'bull';
import {
  CAPPED_EXPONENTIAL,
  cappedExponentialDelay,
  type CappedExponentialOptions,
} from './capped-exponential-backoff.ts';
import { createBullQueue, type BullQueue, type QueueConnection } from './create-bull-queue.ts';

/** The one queue between receiver and worker. docs/receiver.md#queue documents name and options. */
export const WEBHOOK_QUEUE_NAME = 'webhook-events';

/** How a webhook signs: the platform's own scheme, or Standard Webhooks. */
export type WebhookSignatureScheme = 'platform' | 'standard-webhooks';

/** What the receiver enqueues for each verified delivery. */
export interface WebhookJobData {
  /**
   * The delivery's identity, lowercase hex SHA-256: of the raw body (Standard Webhooks: of the
   * webhook's name and `webhook-id`; an undated join, leave or profile update: of the body and a
   * random value, receiver/delivery-key.ts). Also the bull job id.
   */
  dedupeKey: string;
  /** Name of the webhook whose secret verified the signature. */
  webhook: string;
  /**
   * The signature scheme that verified it (docs/receiver.md#signature-schemes): the tray applies
   * no Standard Webhooks delivery. Absent on a job queued by a receiver from before it was written.
   */
  scheme?: WebhookSignatureScheme;
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
 * (webhookRetryDelays) span 6 to 7.5 minutes. A storage outage costs no attempt (unless one job
 * meets more than WORKER_OUTAGE_RETRIES of them in one attempt): the worker stops taking jobs
 * until the storage answers (tray-service/storage/storage-gate.ts), and a stall costs none either
 * (up to WEBHOOK_MAX_STALLED_COUNT). After the last attempt the job stays in the failed set (the
 * dead letter) until `scripts/replay` moves it back.
 */
export const webhookJobOptions: Bull.JobOptions = {
  attempts: 20,
  backoff: { type: CAPPED_EXPONENTIAL },
  removeOnComplete: { age: 24 * 3600, count: 10_000 },
  removeOnFail: false,
  // bull adds each attempt's stack trace to the job's hash, trimmed only to this: a dead letter,
  // never removed, kept twenty (about 20 kB), and twenty more at each failed replay.
  stackTraceLimit: 1,
};

/**
 * Stalls a webhook job survives: bull's default, 1, failed a job outright, without its remaining
 * attempts, the second time its worker stopped holding it mid-job. A stall costs no attempt and is
 * no fault of the job as a rule: a worker killed, or shut down while its jobs wait for the storage
 * (start-worker.ts), and every job in flight on a worker that dies stalls with it. More than this
 * many stalls means the job itself stops its workers (one that runs them out of memory, say): it
 * goes to the failed set, replayable, instead of taking down worker after worker; the tray worker
 * logs and counts it.
 */
export const WEBHOOK_MAX_STALLED_COUNT = 5;

export type { QueueConnection };

export function createWebhookQueue(
  connection: QueueConnection,
  name = WEBHOOK_QUEUE_NAME,
  retryDelays: CappedExponentialOptions = webhookRetryDelays,
  /**
   * How long a job stays its worker's without the worker renewing it (bull renews every half of
   * it), also the interval of the stalled-job check: bull's 30 s when not given. A job held by a
   * worker that died runs again on another worker within about two to three of these.
   */
  lockMs?: number,
): BullQueue<WebhookJobData> {
  // Every instance registers the strategy: bull computes a retry's delay in the process whose
  // worker ran the failed attempt, from the job's stored `backoff.type`.
  return createBullQueue<WebhookJobData>(name, connection, {
    maxStalledCount: WEBHOOK_MAX_STALLED_COUNT,
    ...(lockMs === undefined ? {} : { lockDuration: lockMs, stalledInterval: lockMs }),
    backoffStrategies: {
      [CAPPED_EXPONENTIAL]: (attemptsMade) => cappedExponentialDelay(attemptsMade, retryDelays),
    },
  });
}
