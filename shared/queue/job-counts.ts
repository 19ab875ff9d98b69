import type Bull from 'bull';

export const queueStates = ['waiting', 'active', 'paused', 'delayed', 'failed', 'completed'] as const;

/**
 * A queue's job counts by state, as bull reports them. `paused`: jobs of a paused queue not
 * processed yet (bull moves its waiting jobs there, and adds new ones there).
 */
export type JobCounts = Record<(typeof queueStates)[number], number>;

/** Reads a bull queue's counts in one MULTI. */
export async function jobCounts(queue: Bull.Queue<unknown>): Promise<JobCounts> {
  // bull counts paused jobs too (in the same MULTI as the others); its typings leave it out.
  const counts: Bull.JobCounts & { paused?: number } = await queue.getJobCounts();
  return {
    waiting: counts.waiting,
    active: counts.active,
    paused: counts.paused ?? 0,
    delayed: counts.delayed,
    failed: counts.failed,
    completed: counts.completed,
  };
}
