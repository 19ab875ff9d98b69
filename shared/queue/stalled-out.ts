/**
 * The reason bull gives a job it failed for stalling more than `maxStalledCount` times (its worker
 * stopped holding it mid-job, again and again), without its remaining attempts. Bull's own words,
 * the only way to tell such a failure from a job's own in its `failed` event.
 */
export const STALLED_OUT_REASON = 'job stalled more than allowable limit';

/** True for the error of a job bull failed for stalling too often. */
export function isStalledOut(error: unknown): boolean {
  return error instanceof Error && error.message === STALLED_OUT_REASON;
}
