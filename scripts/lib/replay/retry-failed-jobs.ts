import type Bull from 'bull';

export interface RetryCounts {
  moved: number;
  /** No longer failed when its turn came (retried by someone else, or removed). */
  skipped: number;
  errors: number;
}

/** Ids of the failed set as it is now: jobs that fail again during the replay are not replayed twice. */
export async function failedJobIds(queue: Bull.Queue, limit: number, pageSize = 500): Promise<string[]> {
  const total = Math.min(await queue.getFailedCount(), limit);
  const ids: string[] = [];
  for (let start = 0; start < total; start += pageSize) {
    const jobs = await queue.getFailed(start, Math.min(start + pageSize, total) - 1);
    for (const job of jobs) if (job) ids.push(String(job.id));
  }
  return [...new Set(ids)];
}

/**
 * Moves each failed job back to waiting with bull's `job.retry()`: one Redis script that removes
 * the id from the failed set and pushes it to the wait list only if the removal succeeded, so a
 * job is moved back exactly once even when two operators replay at the same time.
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
        await job.retry();
        counts.moved += 1;
      } catch (error) {
        // bull's messages for "not in the failed set any more" and "locked by a worker".
        if (/already retried or has not failed|doesn't exist/i.test((error as Error).message))
          counts.skipped += 1;
        else counts.errors += 1;
      }
    }
    done += 1;
    onProgress(done);
  }
  return counts;
}
