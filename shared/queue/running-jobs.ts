import type Bull from 'bull';

/**
 * Counts the jobs this process's workers hold: from bull's local `active` until its `completed` or
 * `failed`, which bull emits once the job's end is written to Redis. A job ended in the handler but
 * not yet written still counts: a shutdown that cut the connections then would lose its end, and
 * the job would run again. A job parked at shutdown (storage-gate.ts) never stops counting.
 */
export function trackRunningJobs(queue: Pick<Bull.Queue, 'on'>): () => number {
  const running = new Set<string>();
  queue.on('active', (job: Bull.Job) => running.add(String(job.id)));
  // Also for jobs of other workers that this queue's stalled check failed: not in the set.
  const ended = (job: Bull.Job | null) => {
    if (job) running.delete(String(job.id));
  };
  queue.on('completed', ended);
  queue.on('failed', ended);
  return () => running.size;
}
