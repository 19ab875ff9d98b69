import type Bull from 'bull';
import { retryWithFreshAttempts } from '../../../shared/queue/retry-with-fresh-attempts.ts';

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
 * Moves each failed job back to waiting with its attempts counted afresh (retryWithFreshAttempts),
 * exactly once even when two operators replay at the same time.
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
        await retryWithFreshAttempts(queue, job);
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
