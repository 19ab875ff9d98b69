import type Bull from 'bull';
import {
  createWebhookQueue,
  WEBHOOK_QUEUE_NAME,
  type WebhookJobData,
  type WebhookSignatureScheme,
} from '../../shared/queue/webhook-queue.ts';
import type { RedisTarget } from '../../shared/redis/redis-target.ts';
import { isStalledOut } from '../../shared/queue/stalled-out.ts';

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

/** An attempt that threw; `final` when it was the job's last (it is in the failed set then). */
export interface FailedEvent {
  readonly event: WebhookEvent;
  readonly error: Error;
  readonly final: boolean;
}

export interface ConsumerOptions {
  /**
   * The receiver's Redis: its REDIS_URL, or the cluster it uses (REDIS_CLUSTER_NODES:
   * `withRedisTarget` in shared/config/common-config.ts makes either from the environment).
   */
  redis: RedisTarget;
  /** The receiver's QUEUE_PREFIX (default `bull`). */
  prefix: string;
  /** Jobs handled at once by this process. */
  concurrency?: number;
  queueName?: string;
  /**
   * Told of each attempt that threw. A final one is in the failed set, where nothing runs it again
   * until someone replays it (`npm run replay -- failed`): say so where you will see it.
   */
  onFailed?: (failure: FailedEvent) => void;
  /**
   * Told when bull could not start taking jobs (its connection closed, or Redis refused a command
   * it needs, such as SUBSCRIBE for an ACL user without channel access): bull then takes none for
   * the life of the process, so stop it and let your supervisor start it again. Not told once
   * close() began. Without it the failure goes to the queue's `error` listeners.
   */
  onStopped?: (error: Error) => void;
}

export interface RunningConsumer {
  readonly queue: Bull.Queue<WebhookJobData>;
  /**
   * Stops taking jobs, waits for the ones in progress (at most `deadlineMs`, 8 s by default: within
   * an orchestrator's usual 10 s grace), and closes the connections. Answers `timed out` when a job
   * was still running at the deadline: it was left active, and bull runs it again (as a stalled job)
   * on a consumer that is running, so make `handle` idempotent on `key`.
   */
  close(deadlineMs?: number): Promise<'closed' | 'timed out'>;
}

/** How long close waits for the jobs in progress by default. */
export const CLOSE_DEADLINE_MS = 8_000;

/**
 * Takes the receiver's jobs from its bull queue and hands each event to `handle`. The queue is
 * opened with the kit's own `createWebhookQueue`, which registers the retry strategy the receiver's
 * jobs name: a consumer without it could not schedule a retry. Connection trouble (Redis down, a
 * refused password) arrives as the queue's `error` event; the connections keep retrying.
 */
export function startConsumer(options: ConsumerOptions, handle: HandleEvent): RunningConsumer {
  const queue = createWebhookQueue(
    { redis: options.redis, prefix: options.prefix },
    options.queueName ?? WEBHOOK_QUEUE_NAME,
  );
  let closing = false;
  const processing = queue.process(options.concurrency ?? 4, async (job) => {
    const event = eventOf(job);
    try {
      await handle(event);
    } catch (error) {
      const final = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      options.onFailed?.({ event, error: error instanceof Error ? error : new Error(String(error)), final });
      throw error;
    }
  });
  // process() rejects when bull's set-up fails, and bull then takes no job: told to onStopped (or,
  // without it, to the queue's `error` listeners), instead of an unhandled rejection.
  processing.catch((error: unknown) => {
    if (closing) return;
    const failure = error instanceof Error ? error : new Error(String(error));
    if (options.onStopped) options.onStopped(failure);
    else queue.emit('error', failure);
  });
  // A job whose worker stopped holding it mid-job too often (killed, say, by the job itself) is
  // failed by bull's stalled check, which runs none of the code above: told as a final failure.
  queue.on('failed', (job: Bull.Job<WebhookJobData> | null, error: Error) => {
    if (job && isStalledOut(error)) options.onFailed?.({ event: eventOf(job), error, final: true });
  });
  return {
    queue,
    async close(deadlineMs = CLOSE_DEADLINE_MS) {
      closing = true;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'timed out'>((resolve) => {
        timer = setTimeout(() => resolve('timed out'), deadlineMs);
      });
      try {
        const outcome = await Promise.race([queue.close().then(() => 'closed' as const), late]);
        // The close still waits for the job: its connections go instead, so the consumer takes no
        // further job and the job's lock lapses: a running consumer takes it again.
        if (outcome === 'timed out') await queue.disconnect();
        return outcome;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

function eventOf(job: Bull.Job<WebhookJobData>): WebhookEvent {
  return {
    event: job.data.event,
    data: job.data.data,
    key: job.data.dedupeKey,
    webhook: job.data.webhook,
    // A job queued by a receiver from before schemes was the platform's.
    scheme: job.data.scheme ?? 'platform',
    receivedAt: new Date(job.data.receivedAt),
    attempt: job.attemptsMade + 1,
  };
}
