import type Bull from 'bull';
import { z } from 'zod';
import type { Logger } from '../../shared/logging/create-logger.ts';
import { trackJobHandlers, trackRunningJobs } from '../../shared/queue/running-jobs.ts';
import { redactUrlCredentials } from '../../shared/logging/redact-url-credentials.ts';
import {
  CAPPED_EXPONENTIAL,
  cappedExponentialDelay,
  type CappedExponentialOptions,
} from '../../shared/queue/capped-exponential-backoff.ts';
import {
  createBullQueue,
  type BullQueue,
  type QueueConnection,
} from '../../shared/queue/create-bull-queue.ts';
import { retryWithFreshAttempts } from '../../shared/queue/retry-with-fresh-attempts.ts';
import { watchProcessing } from '../../shared/queue/watch-processing.ts';
import { logQueueErrors } from '../../shared/queue/log-queue-errors.ts';
import { WEBHOOK_MAX_STALLED_COUNT } from '../../shared/queue/webhook-queue.ts';
import { toDecisionView } from '../domain/decision-doc.ts';
import type { DecisionsPort } from '../storage/port.ts';
import { closeQueueAtGate, createStorageGate } from '../storage/storage-gate.ts';
import { runPastStorageFailures } from '../storage/run-past-storage-failures.ts';
import { signDecision } from './sign-decision.ts';

/** Decisions travel to MODERATION_WEBHOOK_URL through their own queue, so a slow or failing
 * moderation endpoint never holds up the webhook queue. */
export const DECISIONS_QUEUE_NAME = 'moderation-decisions';

export interface DecisionJobData {
  decisionId: string;
}

/**
 * The longest wait between two delivery attempts of a decision. Bull's own exponential backoff,
 * (2^n - 1) x MODERATION_WEBHOOK_BACKOFF_MS, has no cap: at the largest settings (100 attempts,
 * an hour) a decision would stay `pending` for longer than the universe has existed. Capped, the
 * last attempt comes at most (attempts - 1) hours after the first: 99 hours at the largest
 * settings, 511 s at the defaults (10 attempts, 1 s).
 */
export const DECISION_MAX_BACKOFF_MS = 3_600_000;

const defaultDelays: CappedExponentialOptions = { firstMs: 1_000, maxMs: DECISION_MAX_BACKOFF_MS };
const storedDelays = z.object({ firstMs: z.number().positive(), maxMs: z.number().positive() });

/**
 * Wait before the next attempt after `attemptsMade` failed ones: the job's first wait, doubling,
 * at most DECISION_MAX_BACKOFF_MS (less up to a fifth at random, see capped-exponential-backoff.ts).
 * The delays travel with the job (`backoff.options`), so whichever instance runs the failed attempt
 * waits as the enqueuing one was configured; a job without them gets the defaults.
 */
export function decisionRetryDelay(
  attemptsMade: number,
  options: unknown,
  random: () => number = Math.random,
): number {
  const parsed = storedDelays.safeParse(options);
  const delays = parsed.success ? parsed.data : defaultDelays;
  return cappedExponentialDelay(
    attemptsMade,
    { firstMs: delays.firstMs, maxMs: Math.min(delays.maxMs, DECISION_MAX_BACKOFF_MS) },
    random,
  );
}

export function createDecisionsQueue(
  connection: QueueConnection,
  /** The job lock and stalled-check interval (bull's 30 s when not given; tests shorten it). */
  lockMs?: number,
): BullQueue<DecisionJobData> {
  // Every instance registers the strategy: bull computes a retry's delay in the process whose
  // worker ran the failed attempt, from the job's stored `backoff.type`. A stall is a worker that
  // died mid-delivery, not the endpoint's failure: allowed as often as a webhook job's.
  return createBullQueue<DecisionJobData>(DECISIONS_QUEUE_NAME, connection, {
    maxStalledCount: WEBHOOK_MAX_STALLED_COUNT,
    ...(lockMs === undefined ? {} : { lockDuration: lockMs, stalledInterval: lockMs }),
    backoffStrategies: {
      [CAPPED_EXPONENTIAL]: (attemptsMade: number, _error: Error, options: unknown) =>
        decisionRetryDelay(attemptsMade, options),
    },
  });
}

export interface DeliveryOptions {
  attempts: number;
  /** MODERATION_WEBHOOK_BACKOFF_MS: the first wait, doubling per attempt. */
  backoffMs: number;
  /** The longest wait; DECISION_MAX_BACKOFF_MS unless less (tests). */
  maxBackoffMs?: number;
}

/**
 * Enqueues decisions that are still pending; the job id is the decision id, so enqueuing one twice
 * queues it once. A pending decision whose job bull already gave up on (failed while its failure
 * could not be recorded: the database was down), or completed before the decision was purged and
 * saved again, is sent again: bull's add keeps the job it finds and queues nothing, which would
 * leave the decision pending for ever.
 */
export function createDecisionEnqueuer(queue: BullQueue<DecisionJobData>, options: DeliveryOptions) {
  const delays: CappedExponentialOptions = {
    firstMs: options.backoffMs,
    maxMs: Math.min(options.maxBackoffMs ?? DECISION_MAX_BACKOFF_MS, DECISION_MAX_BACKOFF_MS),
  };
  return async (decisionIds: readonly string[]): Promise<void> => {
    await Promise.all(
      decisionIds.map(async (decisionId) => {
        const addOptions = {
          jobId: decisionId,
          attempts: options.attempts,
          backoff: { type: CAPPED_EXPONENTIAL, options: delays },
          // Kept a week after success for the dashboard, the latest 10,000 at most (a busy community's
          // decisions would hold gigabytes of Redis); a repeat is prevented by the decision's own
          // state (only pending ones are enqueued, and a delivered one is not sent).
          removeOnComplete: { age: 7 * 24 * 3600, count: 10_000 },
          removeOnFail: false,
          // One stack trace, not one per attempt (up to 100), on a job kept when it failed.
          stackTraceLimit: 1,
        };
        const job = await queue.add({ decisionId }, addOptions);
        // add() hands back a job of that id whether it queued one or found one; only whether it is
        // in the failed set is read. It goes back only if it is still failed (two enqueuers at
        // once move it once), with all its attempts: it had spent them.
        if (await job.isFailed()) await retryWithFreshAttempts(queue, job).catch(() => undefined);
        // A completed one delivered this decision before it was purged with its event, which came
        // back since (a redelivery, a replay) and saved it pending again: queued anew, or it stays
        // pending for good. Only pending decisions are enqueued, so this one was not delivered
        // since it was saved again.
        else if (await job.isCompleted()) {
          await job.remove().catch(() => undefined);
          await queue.add({ decisionId }, addOptions);
        }
      }),
    );
  };
}

/** The endpoint took the decision (2xx), but the database did not record it. */
class DeliveredUnrecordedError extends Error {
  constructor(cause: unknown) {
    super(
      `delivered, but the delivery could not be recorded: ${cause instanceof Error ? cause.message : String(cause)}`,
    );
  }
}

export interface DecisionDeliveryDeps {
  queue: BullQueue<DecisionJobData>;
  decisions: Pick<DecisionsPort, 'get' | 'markDelivered' | 'markAttemptFailed'>;
  /** The storage's ping (as /readyz asks it): while it fails, deliveries wait and spend no attempt. */
  ping: () => Promise<void>;
  url: string;
  /** MODERATION_WEBHOOK_SECRET: every decision is signed with it (sign-decision.ts). */
  secret: string;
  timeoutMs: number;
  logger: Logger;
  clock?: () => Date;
  concurrency?: number;
  /** Asks the process to stop (exit 1) when bull could not start taking deliveries. */
  onStopped?: (reason: string) => void;
  /** The first wait after the storage said "not now" (runPastStorageFailures; tests shorten it). */
  storageBusyFirstWaitMs?: number;
}

/**
 * POSTs each decision as JSON. Any answer but 2xx, a timeout or a network error fails the attempt
 * and bull retries it with capped exponential backoff (decisionRetryDelay); the receiver can drop
 * repeats by the body's `id` (signed; `Idempotency-Key` carries it too, unsigned).
 * Each attempt is signed afresh, with its own timestamp, so a retry hours later still verifies.
 */
/** A running delivery consumer. */
export interface DecisionDelivery {
  /**
   * Takes no more deliveries (bull's local pause, not waiting for those in hand): at shutdown,
   * alongside the HTTP drain, so deliveries taken during the drain do not hold the shutdown past
   * its deadline.
   */
  stopTaking(): Promise<void>;
  /** Waits for the deliveries in hand (each bounded by MODERATION_WEBHOOK_TIMEOUT_MS), then closes. */
  close(): Promise<void>;
}

export function startDecisionDelivery(deps: DecisionDeliveryDeps): DecisionDelivery {
  const clock = deps.clock ?? (() => new Date());
  // As the tray worker's: while the storage does not answer, this process takes no deliveries and
  // those in hand wait, so an outage spends no attempt (each read of a decision failed one, and a
  // database out for the minutes the attempts span gave up decisions the endpoint never saw).
  // Set by stopTaking: the storage coming back during the shutdown's drain must not resume a queue
  // the shutdown paused.
  let stopping = false;
  const gate = createStorageGate({
    ping: deps.ping,
    logger: deps.logger,
    onChange: (open) => {
      if (open && stopping) return;
      const change = open ? deps.queue.resume(true) : deps.queue.pause(true, true);
      change.catch(() => undefined);
    },
  });
  // And as the worker's jobs, a delivery waits out a database that answers but takes no writes (a
  // full disk: the endpoint had the decision again on every attempt, and the last left it pending
  // for good), says "not now" or lost its connection: none of these spends an attempt.
  const fromStorage = <T>(decisionId: string, call: () => Promise<T>): Promise<T> =>
    runPastStorageFailures(gate, call, {
      logger: deps.logger,
      job: { decisionId },
      busyFirstWaitMs: deps.storageBusyFirstWaitMs,
    });
  /** Set by close(): bull's set-up that close cut short is no failure. */
  let closed = false;
  /** Deliveries in flight, parked ones included: the shutdown cuts the queue after the others. */
  const running = trackRunningJobs(deps.queue);
  /** Deliveries whose handler runs: the shutdown closes the storage their outcome is stored in next. */
  const handlers = trackJobHandlers(deps.queue);
  const processing = deps.queue.process(deps.concurrency ?? 2, async (job) => {
    const doc = await fromStorage(job.data.decisionId, () => deps.decisions.get(job.data.decisionId));
    if (!doc || doc.delivery === 'delivered') return;
    const body = JSON.stringify(toDecisionView(doc));
    const signature = signDecision(deps.secret, Math.floor(clock().getTime() / 1000), body);
    let response: Response;
    try {
      response = await fetch(deps.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': doc.id, ...signature },
        body,
        signal: AbortSignal.timeout(deps.timeoutMs),
        redirect: 'error',
      });
    } catch (error) {
      // Bull keeps a failed attempt's message and stack in Redis (the queue dashboard shows them),
      // and fetch's may quote the URL with its credentials: only a redacted copy goes on.
      throw new Error(redactUrlCredentials(error instanceof Error ? error.message : String(error)));
    }
    await response.body?.cancel();
    if (!response.ok) throw new Error(`moderation webhook answered HTTP ${response.status}`);
    await fromStorage(doc.id, () =>
      deps.decisions.markDelivered(doc.id, job.attemptsMade + 1, clock()),
    ).catch((error: unknown) => Promise.reject(new DeliveredUnrecordedError(error)));
  });
  watchProcessing(processing, {
    name: 'decision',
    logger: deps.logger,
    closing: () => stopping || closed,
    onStopped: deps.onStopped,
  });
  // Bull keeps the queue's Redis errors and lost job locks to itself: said as the webhook queue's.
  const stopLoggingQueueErrors = logQueueErrors(deps.queue, deps.logger, {
    name: 'decision',
    jobFields: (job) => ({ decisionId: job.data.decisionId }),
  });
  deps.queue.on('failed', (job, error) => {
    void recordFailure(job, error).catch((markError: unknown) =>
      deps.logger.warn({ err: markError }, 'could not record a delivery failure'),
    );
  });
  const recordFailure = async (job: Bull.Job<DecisionJobData>, error: Error) => {
    const { decisionId } = job.data;
    const attempts = job.attemptsMade;
    // Also final when bull gave up on the job before its attempts ran out: a job that stalled more
    // than maxStalledCount times (its workers died mid-delivery) is failed for good, its attempts
    // untouched, and would otherwise leave the decision pending for ever.
    const final = attempts >= (job.opts.attempts ?? 1) || (await job.isFailed().catch(() => false));
    if (error instanceof DeliveredUnrecordedError) {
      // The endpoint has it: a final attempt must not record the decision as failed. Recorded as
      // delivered now if the database answers; otherwise the next attempt delivers it again (the
      // endpoint drops repeats by Idempotency-Key).
      deps.logger.warn({ decisionId, attempts, err: error.message }, 'decision delivered, not recorded');
      // Outside the gate: a wait there would count as a parked job in the shutdown's reckoning
      // (closeQueueAtGate), though no job is held by it. The delivery's own record waited already.
      if (final) await deps.decisions.markDelivered(decisionId, attempts, clock());
      return;
    }
    // fetch's errors may quote the URL, credentials and all; the message is logged and stored
    // (lastError, shown by GET /admin/moderation/decisions).
    const reason = redactUrlCredentials(error.message);
    deps.logger[final ? 'error' : 'warn']({ decisionId, attempts, err: reason }, 'decision delivery failed');
    await deps.decisions.markAttemptFailed(decisionId, attempts, reason, final);
  };
  return {
    stopTaking: () => {
      stopping = true;
      return deps.queue.pause(true, true);
    },
    close: async () => {
      closed = true;
      await closeQueueAtGate(gate, deps.queue, running, handlers);
      stopLoggingQueueErrors();
    },
  };
}
