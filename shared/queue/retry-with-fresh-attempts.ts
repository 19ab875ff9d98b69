import type Bull from 'bull';
import { internalsOf } from './bull-queue-internals.ts';

/**
 * A failed job's attempts and stalls counted afresh, while it is still in the failed set (no
 * worker holds it). bull's retry() leaves `attemptsMade` as it was: a dead letter replayed had its
 * last attempt spent, so any failure, a passing one too, sent it straight back with no backoff;
 * and one failed for stalling kept its stall count. KEYS: the failed set, the job's hash. ARGV: its id.
 */
const FRESH_ATTEMPTS = `
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('HSET', KEYS[2], 'attemptsMade', 0)
redis.call('HDEL', KEYS[2], 'stalledCounter')
return 1
`;

/**
 * Moves a failed job back to waiting with its attempts counted afresh (FRESH_ATTEMPTS), then by
 * bull's `job.retry()`: one Redis script that removes the id from the failed set and pushes it to
 * the wait list only if the removal succeeded, so a job is moved back exactly once even when two
 * callers retry it at the same time (the other gets bull's error).
 */
export async function retryWithFreshAttempts<T>(
  queue: Bull.Queue<T>,
  job: Pick<Bull.Job<T>, 'id' | 'retry'>,
): Promise<void> {
  const internals = internalsOf(queue);
  const id = String(job.id);
  await queue.client.eval(FRESH_ATTEMPTS, 2, internals.keys.failed, internals.toKey(id), id);
  await job.retry();
}
