import type Bull from 'bull';
import type { Logger } from '../logging/create-logger.ts';
import { createLogThrottle } from '../logging/log-throttle.ts';

/** What a job lock bull could not renew is logged as. */
export const LOCK_NOT_RENEWED =
  "could not renew a job's lock (Redis): it will stall and run again, no attempt spent";

export interface QueueErrorsOptions<T> {
  /** The queue as its lines name it: `webhook`, `decision`. */
  name: string;
  /** What a lock failure's line says of its job besides its id (never a secret). */
  jobFields: (job: Bull.Job<T>) => Record<string, unknown>;
  /** Queue errors are said at most once per this many ms; by default a minute. */
  everyMs?: number;
}

/**
 * Bull swallows its own failures (it installs an empty `error` handler): a job it could not fetch,
 * complete or move, and a job lock it could not renew, after which it never renews that lock
 * again, so the job stalls and runs a second time elsewhere. Says both: each lock failure with
 * its job, and the queue's errors at most once per `everyMs` with how many went unsaid since (a
 * Redis outage fails every fetch of every slot, each 5 s). Answers a function that stops.
 */
export function logQueueErrors<T>(
  queue: Bull.Queue<T>,
  logger: Logger,
  options: QueueErrorsOptions<T>,
): () => void {
  const throttle = createLogThrottle(options.everyMs ?? 60_000);
  const onError = (error: Error, context?: string) => {
    const unsaidBefore = throttle('queue error');
    if (unsaidBefore === undefined) return;
    logger.warn(
      { err: error.message, context, unsaidBefore },
      `${options.name} queue error (Redis); bull tries again by itself`,
    );
  };
  const onLockFailed = (job: Bull.Job<T>, error: Error) => {
    logger.warn({ ...options.jobFields(job), jobId: job.id, err: error.message }, LOCK_NOT_RENEWED);
  };
  queue.on('error', onError);
  queue.on('lock-extension-failed', onLockFailed);
  return () => {
    queue.off('error', onError);
    queue.off('lock-extension-failed', onLockFailed);
  };
}
