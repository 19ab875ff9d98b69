/**
 * The benches' quantile: the value at rank floor(q x n) of `sorted` (ascending), the last one for
 * q = 1, 0 for no samples. With 1,000 samples the p99 is the 10th slowest.
 */
export const quantile = (sorted: readonly number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
