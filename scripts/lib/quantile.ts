/**
 * The benches' quantile: the value at rank floor(q x n) of `sorted` (ascending), the last one for
 * q = 1, 0 for no samples. With 1,000 samples the p99 is the 10th slowest.
 */
export const quantile = (sorted: readonly number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

/**
 * The middle value, or the mean of the two middle values for an even count (of four rounds, the
 * mean of the second and third, not the third); 0 for no values. `values` in any order.
 */
export const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

/** The p99 of `values` in any order, to a tenth (of a millisecond), NaN for no values: a soak minute's figure. */
export const p99Tenths = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : Math.round(quantile(sorted, 0.99) * 10) / 10;
};
