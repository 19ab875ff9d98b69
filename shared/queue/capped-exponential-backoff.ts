/** The webhook queue's retry policy, registered with bull under this name (createWebhookQueue). */
export const CAPPED_EXPONENTIAL = 'cappedExponential';

export interface CappedExponentialOptions {
  /** Wait before the second attempt; doubles per attempt. */
  firstMs: number;
  /** Longest wait between two attempts. */
  maxMs: number;
}

/**
 * Wait before the next attempt after `attemptsMade` failed ones: firstMs, 2x, 4x, ... up to maxMs.
 * Uncapped doubling left a job idle for minutes after a short database outage had ended (the 9th
 * wait is 256 s), while hot records kept failing jobs' attempts during the outage; with a cap the
 * queue catches up within maxMs of recovery, and more attempts keep the total retry window.
 */
export function cappedExponentialDelay(attemptsMade: number, options: CappedExponentialOptions): number {
  const doublings = Math.max(0, attemptsMade - 1);
  // 2 ** 31 already exceeds any sane cap; keeps the number finite for absurd attempt counts.
  return Math.min(options.firstMs * 2 ** Math.min(doublings, 31), options.maxMs);
}
