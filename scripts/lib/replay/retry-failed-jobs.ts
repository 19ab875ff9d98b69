import type Bull from 'bull';
import { internalsOf } from '../../../shared/queue/bull-queue-internals.ts';

export interface RetryCounts {
  moved: number;
  /** No longer failed when its turn came (retried by someone else, running, or removed). */
  skipped: number;
  errors: number;
}

/** bull's Queue#getRanges, which its type declarations leave out: a state's job ids, in one call. */
interface WithRanges {
  getRanges(types: string[], start: number, end: number, asc: boolean): Promise<string[]>;
}

/**
 * Ids of the failed set as it is now, oldest failure first (the failed set is ordered by the time
 * each job failed; those that failed first are the nearest to its trimming), in one call: paging by
 * position would skip jobs when others fail meanwhile and shift the set. Jobs that fail again during
 * the replay are not replayed twice.
 */
export async function failedJobIds(queue: Bull.Queue, limit: number): Promise<string[]> {
  const end = Number.isFinite(limit) ? limit - 1 : -1;
  const ids = await (queue as unknown as WithRanges).getRanges(['failed'], 0, end, true);
  return [...new Set(ids.map(String))];
}

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
 * Moves each failed job back to waiting with its attempts counted afresh (FRESH_ATTEMPTS), then
 * bull's `job.retry()`: one Redis script that removes the id from the failed set and pushes it to
 * the wait list only if the removal succeeded, so a job is moved back exactly once even when two
 * operators replay at the same time.
 */
export async function retryFailedJobs(
  queue: Bull.Queue,
  ids: readonly string[],
  onProgress: (done: number) => void,
): Promise<RetryCounts> {
  const counts: RetryCounts = { moved: 0, skipped: 0, errors: 0 };
  let done = 0;
  for (const id of ids) {
    const job = await queue.getJob(id);
    if (!job) {
      counts.skipped += 1;
    } else {
      try {
        const internals = internalsOf(queue);
        await queue.client.eval(FRESH_ATTEMPTS, 2, internals.keys.failed, internals.toKey(id), id);
        await job.retry();
        counts.moved += 1;
      } catch (error) {
        // bull's messages for "not in the failed set any more", "removed" and "locked by a worker"
        // (another run moved it back and a worker is running it).
        if (/already retried or has not failed|doesn't exist|is locked/i.test((error as Error).message))
          counts.skipped += 1;
        else counts.errors += 1;
      }
    }
    done += 1;
    onProgress(done);
  }
  return counts;
}
