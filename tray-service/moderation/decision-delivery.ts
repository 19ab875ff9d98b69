import type Bull from 'bull';
import type { Logger } from '../../shared/logging/create-logger.ts';
import { redactUrlCredentials } from '../../shared/logging/redact-url-credentials.ts';
import { createBullQueue, type QueueConnection } from '../../shared/queue/create-bull-queue.ts';
import { toDecisionView } from '../domain/decision-doc.ts';
import type { DecisionsPort } from '../storage/port.ts';
import { signDecision } from './sign-decision.ts';

/** Decisions travel to MODERATION_WEBHOOK_URL through their own queue, so a slow or failing
 * moderation endpoint never holds up the webhook queue. */
export const DECISIONS_QUEUE_NAME = 'moderation-decisions';

export interface DecisionJobData {
  decisionId: string;
}

export function createDecisionsQueue(connection: QueueConnection): Bull.Queue<DecisionJobData> {
  return createBullQueue<DecisionJobData>(DECISIONS_QUEUE_NAME, connection);
}

export interface DeliveryOptions {
  attempts: number;
  backoffMs: number;
}

/** Enqueues decisions; the job id is the decision id, so enqueuing one twice queues it once. */
export function createDecisionEnqueuer(queue: Bull.Queue<DecisionJobData>, options: DeliveryOptions) {
  return async (decisionIds: readonly string[]): Promise<void> => {
    await Promise.all(
      decisionIds.map((decisionId) =>
        queue.add(
          { decisionId },
          {
            jobId: decisionId,
            attempts: options.attempts,
            backoff: { type: 'exponential', delay: options.backoffMs },
            // Kept a week after success so a re-moderated event does not deliver again.
            removeOnComplete: { age: 7 * 24 * 3600 },
            removeOnFail: false,
          },
        ),
      ),
    );
  };
}

export interface DecisionDeliveryDeps {
  queue: Bull.Queue<DecisionJobData>;
  decisions: Pick<DecisionsPort, 'get' | 'markDelivered' | 'markAttemptFailed'>;
  url: string;
  /** MODERATION_WEBHOOK_SECRET: every decision is signed with it (sign-decision.ts). */
  secret: string;
  timeoutMs: number;
  logger: Logger;
  clock?: () => Date;
  concurrency?: number;
}

/**
 * POSTs each decision as JSON. Any answer but 2xx, a timeout or a network error fails the attempt
 * and bull retries it with exponential backoff; the receiver can drop repeats by `Idempotency-Key`.
 * Each attempt is signed afresh, with its own timestamp, so a retry hours later still verifies.
 */
export function startDecisionDelivery(deps: DecisionDeliveryDeps): { close(): Promise<void> } {
  const clock = deps.clock ?? (() => new Date());
  void deps.queue.process(deps.concurrency ?? 2, async (job) => {
    const doc = await deps.decisions.get(job.data.decisionId);
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
    await deps.decisions.markDelivered(doc.id, job.attemptsMade + 1, clock());
  });
  deps.queue.on('failed', (job, error) => {
    const attempts = job.attemptsMade;
    const final = attempts >= (job.opts.attempts ?? 1);
    // fetch's errors may quote the URL, credentials and all; the message is logged and stored
    // (lastError, shown by GET /admin/moderation/decisions).
    const reason = redactUrlCredentials(error.message);
    deps.logger[final ? 'error' : 'warn'](
      { decisionId: job.data.decisionId, attempts, err: reason },
      'decision delivery failed',
    );
    void deps.decisions
      .markAttemptFailed(job.data.decisionId, attempts, reason, final)
      .catch((markError: unknown) =>
        deps.logger.warn({ err: markError }, 'could not record a delivery failure'),
      );
  });
  return { close: () => deps.queue.close() };
}
