/** The webhook queue's retry policy, registered with bull under this name (createWebhookQueue). */
export const CAPPED_EXPONENTIAL = 'cappedExponential';

export interface CappedExponentialOptions {
  /** Wait before the second attempt; doubles per attempt. */
  firstMs: number;
  /** Longest wait between two attempts. */
  maxMs: number;
}

/**
 * The share of each wait taken off at random: a wait is between 80% and 100% of its doubled,
 * capped value. Jobs that failed together (a poison post and the posts fanned out with it, the
 * backlog of an outage) would otherwise all come back at the same instant, to be gathered or to
 * collide again on every attempt. Taken off rather than added, so maxMs stays the longest wait and
 * the retry window shrinks by a fifth at most.
 */
export const RETRY_JITTER = 0.2;

/**
 * Wait before the next attempt after `attemptsMade` failed ones: firstMs, 2x, 4x, ... up to maxMs,
 * less up to RETRY_JITTER of it at random. Uncapped doubling left a job idle for minutes after a
 * short database outage had ended (the 9th wait is 256 s), while hot records kept failing jobs'
 * attempts during the outage; with a cap the queue catches up within maxMs of recovery, and more
 * attempts keep the total retry window. `random` is in [0, 1), as Math.random's.
 */
export function cappedExponentialDelay(
  attemptsMade: number,
  options: CappedExponentialOptions,
  random: () => number = Math.random,
): number {
  const doublings = Math.max(0, attemptsMade - 1);
  // 2 ** 31 already exceeds any sane cap; keeps the number finite for absurd attempt counts.
  const capped = Math.min(options.firstMs * 2 ** Math.min(doublings, 31), options.maxMs);
  return Math.round(capped * (1 - RETRY_JITTER * random()));
}
