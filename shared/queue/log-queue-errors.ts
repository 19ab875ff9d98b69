import type Bull from 'bull';
import type { Logger } from '../../shared/logging/create-logger.ts';
import { createLogThrottle } from '../../shared/logging/log-throttle.ts';
import type { WebhookJobData } from '../../shared/queue/webhook-queue.ts';

/**
 * Bull swallows its own failures (it installs an empty `error` handler): a job it could not fetch,
 * complete or move, and a job lock it could not renew, after which it never renews that lock
 * again, so the job stalls and runs a second time elsewhere. Says both: each lock failure with
 * its job, and the queue's errors at most once per `everyMs` with how many went unsaid since (a
 * Redis outage fails every fetch of every slot, each 5 s). Answers a function that stops.
 */
export function logQueueErrors(
  queue: Bull.Queue<WebhookJobData>,
  logger: Logger,
  everyMs = 60_000,
): () => void {
  const throttle = createLogThrottle(everyMs);
  const onError = (error: Error, context?: string) => {
    const unsaidBefore = throttle('queue error');
    if (unsaidBefore === undefined) return;
    logger.warn(
      { err: error.message, context, unsaidBefore },
      'webhook queue error (Redis); bull tries again by itself',
    );
  };
  const onLockFailed = (job: Bull.Job<WebhookJobData>, error: Error) => {
    logger.warn(
      { key: job.data.dedupeKey, jobId: job.id, err: error.message },
      "could not renew a job's lock (Redis): it will stall and run again, no attempt spent",
    );
  };
  queue.on('error', onError);
  queue.on('lock-extension-failed', onLockFailed);
  return () => {
    queue.off('error', onError);
    queue.off('lock-extension-failed', onLockFailed);
  };
}
