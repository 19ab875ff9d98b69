import type Bull from 'bull';
import {
  createWebhookQueue,
  WEBHOOK_QUEUE_NAME,
  type WebhookJobData,
  type WebhookSignatureScheme,
} from '../../shared/queue/webhook-queue.ts';

/** One verified event, as the receiver queued it (docs/starter-kit.md, "The job contract"). */
export interface WebhookEvent {
  /** The event's name, e.g. `post.didCreate`. */
  readonly event: string;
  /** The event's payload (docs/contract.md, "Event catalogue"). */
  readonly data: Record<string, unknown>;
  /**
   * The delivery's identity (`dedupeKey`): the same event delivered twice has the same key, except a
   * join, leave or profile update without `data.createdAt`, keyed once per delivery
   * (docs/starter-kit.md).
   */
  readonly key: string;
  /** The configured webhook whose secret signed the delivery. */
  readonly webhook: string;
  /**
   * How it was signed: the platform's scheme, or Standard Webhooks (another sender's events, whose
   * `event` is the payload's `type` and `data` the whole payload).
   */
  readonly scheme: WebhookSignatureScheme;
  /** When the receiver accepted the delivery. */
  readonly receivedAt: Date;
  /** 1 on the first attempt; bull retries a failed attempt with backoff. */
  readonly attempt: number;
}

/**
 * Your code. Resolve when the event is handled; throw (or reject) to have it retried later. It may
 * run more than once for one event (at-least-once delivery), so make it idempotent on `key`.
 */
export type HandleEvent = (event: WebhookEvent) => Promise<void> | void;

export interface ConsumerOptions {
  /** The receiver's Redis (its REDIS_URL). */
  redisUrl: string;
  /** The receiver's QUEUE_PREFIX (default `bull`). */
  prefix: string;
  /** Jobs handled at once by this process. */
  concurrency?: number;
  queueName?: string;
}

export interface RunningConsumer {
  readonly queue: Bull.Queue<WebhookJobData>;
  /** Stops taking jobs, waits for the ones in progress, and closes the connections. */
  close(): Promise<void>;
}

/**
 * Takes the receiver's jobs from its bull queue and hands each event to `handle`. The queue is
 * opened with the kit's own `createWebhookQueue`, which registers the retry strategy the receiver's
 * jobs name: a consumer without it could not schedule a retry. Connection trouble (Redis down, a
 * refused password) arrives as the queue's `error` event; the connections keep retrying.
 */
export function startConsumer(options: ConsumerOptions, handle: HandleEvent): RunningConsumer {
  const queue = createWebhookQueue(
    { redis: options.redisUrl, prefix: options.prefix },
    options.queueName ?? WEBHOOK_QUEUE_NAME,
  );
  // process() rejects when its connection fails to start (a refused password, say): hand that to
  // the queue's `error` listeners with the connections' own errors, instead of an unhandled rejection.
  const processing = queue.process(options.concurrency ?? 4, async (job) => {
    await handle({
      event: job.data.event,
      data: job.data.data,
      key: job.data.dedupeKey,
      webhook: job.data.webhook,
      // A job queued by a receiver from before schemes was the platform's.
      scheme: job.data.scheme ?? 'platform',
      receivedAt: new Date(job.data.receivedAt),
      attempt: job.attemptsMade + 1,
    });
  });
  processing.catch((error: unknown) => queue.emit('error', error));
  return { queue, close: () => queue.close() };
}
