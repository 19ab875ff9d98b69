import type Bull from 'bull';

/**
 * Counts the jobs this process's workers hold: from bull's local `active` until its `completed` or
 * `failed`, which bull emits once the job's end is written to Redis. A job ended in the handler but
 * not yet written still counts: a shutdown that cut the connections then would lose its end, and
 * the job would run again. A job parked at shutdown (storage-gate.ts) never stops counting. One
 * whose end bull could not write at all (its lock lost, Redis failing) emits neither: it stops
 * counting ENDED_GRACE_MS after its handler settled.
 */
export function trackRunningJobs(queue: Pick<Bull.Queue, 'on'>): () => number {
  /** Each job's current run: a rerun of the same id must not be dropped by the earlier run's grace. */
  const running = new Map<string, symbol>();
  queue.on('active', (job: Bull.Job, handled?: Promise<unknown>) => {
    const id = String(job.id);
    const run = Symbol(id);
    running.set(id, run);
    const dropLater = () =>
      setTimeout(() => {
        if (running.get(id) === run) running.delete(id);
      }, ENDED_GRACE_MS).unref();
    void handled?.then(dropLater, dropLater);
  });
  // Also for jobs of other workers that this queue's stalled check failed: not in the map.
  const ended = (job: Bull.Job | null) => {
    if (job) running.delete(String(job.id));
  };
  queue.on('completed', ended);
  queue.on('failed', ended);
  return () => running.size;
}

/**
 * Counts the jobs whose handler this process's workers are running: from bull's local `active`
 * until the handler settles, whether or not bull could then record the job's end.
 */
export function trackJobHandlers(queue: Pick<Bull.Queue, 'on'>): () => number {
  let running = 0;
  queue.on('active', (_job: Bull.Job, handled?: Promise<unknown>) => {
    if (!handled) return;
    running += 1;
    const settled = () => (running -= 1);
    void handled.then(settled, settled);
  });
  return () => running;
}

/** How long after its handler settled a job whose end bull never reported stops counting. */
const ENDED_GRACE_MS = 2_000;
