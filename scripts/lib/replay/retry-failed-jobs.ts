import type Bull from 'bull';
import { internalsOf } from '../../../shared/queue/bull-queue-internals.ts';
import { retryWithFreshAttempts } from '../../../shared/queue/retry-with-fresh-attempts.ts';

export interface RetryCounts {
  moved: number;
  /** No longer failed when its turn came (retried by someone else, running, or removed). */
  skipped: number;
  errors: number;
  /** The first few errors' messages, one per distinct message, for the operator to act on. */
  errorMessages: string[];
}

/** Distinct error messages a run keeps: the first say what is wrong; thousands would say no more. */
export const ERROR_MESSAGES = 3;

/** Failed jobs read per call: the whole set in one would stall the Redis the receiver writes to. */
export const FAILED_PAGE = 1_000;

/** The failed set's key (bull keeps it as a sorted set scored by each job's failure time). */
const failedKey = (queue: Bull.Queue) => internalsOf(queue).keys.failed;

/**
 * The failed set as it stands now: `upTo`, the latest failure time in it, and how many jobs it holds
 * (at most `limit`), read together. bull scores each job with the clock of the worker that failed
 * it; a cut-off taken from the operator's clock left out the newest failures when that clock ran
 * behind the workers', and when it ran ahead took in jobs the replay itself moved back and that
 * failed again. The set's own latest time takes every job failed by now, whatever the operator's clock.
 */
export async function failedSoFar(
  queue: Bull.Queue,
  limit: number,
): Promise<{ upTo: number; total: number }> {
  const key = failedKey(queue);
  const replies = await queue.client.multi().zcard(key).zrange(key, -1, -1, 'WITHSCORES').exec();
  const [count, latest] = (replies ?? []).map(([error, reply]) => {
    if (error) throw error;
    return reply;
  });
  const upTo = Number((latest as string[] | undefined)?.[1] ?? -Infinity);
  return { upTo, total: Math.min(Number(count ?? 0), limit) };
}

/**
 * Ids of the jobs that failed up to `upTo` (ms, failedSoFar), oldest failure first (those
 * nearest to the set's trimming), at most `limit`, in pages of `pageSize` read by failure time:
 * a job moved back leaves the set and shifts every position, so pages by position would skip
 * jobs; by time they cannot. Jobs that fail again meanwhile get a later time, past `upTo`, and are
 * not replayed twice. Jobs of one failure time go in the set's own order (by id), after the ones
 * of that time already given.
 */
export async function* failedJobIdPages(
  queue: Bull.Queue,
  options: { limit: number; upTo: number; pageSize?: number },
): AsyncGenerator<string[]> {
  const { limit, upTo, pageSize = FAILED_PAGE } = options;
  if (upTo === -Infinity) return;
  const key = failedKey(queue);
  let from = '-inf';
  /** Ids already given whose failure time is `from`: read again with it, so skipped here. */
  let givenAtFrom = new Set<string>();
  let given = 0;
  while (given < limit) {
    const wanted = Math.min(pageSize, limit - given);
    // Room for the ids already given at `from`, which may still be in the set (or may have left
    // it: a replay moves each page back before reading the next, and the page stops at `wanted`).
    const reply = await queue.client.zrangebyscore(
      key,
      from,
      upTo,
      'WITHSCORES',
      'LIMIT',
      0,
      wanted + givenAtFrom.size,
    );
    const page: string[] = [];
    let lastScore = from;
    for (let i = 0; i + 1 < reply.length && page.length < wanted; i += 2) {
      const id = reply[i] as string;
      const score = reply[i + 1] as string;
      if (score === from && givenAtFrom.has(id)) continue;
      if (score !== lastScore) {
        lastScore = score;
        givenAtFrom = new Set();
      }
      givenAtFrom.add(id);
      page.push(id);
    }
    if (page.length === 0) return;
    from = lastScore;
    given += page.length;
    yield page;
  }
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
  const counts: RetryCounts = { moved: 0, skipped: 0, errors: 0, errorMessages: [] };
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
        const message = error instanceof Error ? error.message : String(error);
        if (/already retried or has not failed|doesn't exist|is locked/i.test(message)) counts.skipped += 1;
        else {
          counts.errors += 1;
          if (counts.errorMessages.length < ERROR_MESSAGES && !counts.errorMessages.includes(message))
            counts.errorMessages.push(message);
        }
      }
    }
    done += 1;
    onProgress(done);
  }
  return counts;
}
