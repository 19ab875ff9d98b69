/**
 * The per-minute lag histogram (acknowledgement to tray, in ms): a fixed list of bucket bounds, so
 * a minute's histogram is a short array of counts that storage adds up as events are applied, and
 * p50/p99 stay computable from it for any range of minutes. Bucket i holds lags in
 * [LAG_BOUNDS_MS[i-1], LAG_BOUNDS_MS[i]) (bucket 0 from 0; the last one from the last bound up).
 * Above 2 ms the bounds grow by at most 1.5x; an estimated percentile lies in the bucket of the true one.
 */
export const LAG_BOUNDS_MS: readonly number[] = [
  1, 2, 3, 4, 5, 7, 10, 15, 20, 30, 40, 60, 80, 100, 150, 200, 300, 400, 600, 800, 1_000, 1_500, 2_000, 3_000,
  4_000, 6_000, 8_000, 10_000, 15_000, 20_000, 30_000, 45_000, 60_000, 90_000, 120_000, 180_000, 270_000,
  400_000, 600_000, 900_000, 1_350_000, 2_000_000, 3_000_000, 3_600_000,
];

/** Buckets per histogram: one below each bound, and one from the last bound up. */
export const LAG_BUCKETS = LAG_BOUNDS_MS.length + 1;

/** The bucket of a lag (a negative lag, a clock step between two hosts, counts as 0). */
export function lagBucket(lagMs: number): number {
  let low = 0;
  let high = LAG_BOUNDS_MS.length;
  // The first bound above the lag: its index is the bucket.
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((LAG_BOUNDS_MS[middle] ?? Infinity) > lagMs) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** An empty histogram. */
export const emptyLagBuckets = (): number[] => new Array<number>(LAG_BUCKETS).fill(0);

/** Adds `more` into `into` bucket by bucket (a missing bucket counts 0). */
export function addLagBuckets(into: number[], more: readonly number[]): number[] {
  for (let index = 0; index < LAG_BUCKETS; index++) into[index] = (into[index] ?? 0) + (more[index] ?? 0);
  return into;
}

/**
 * The q-quantile (0 < q <= 1) of a histogram, interpolated within its bucket and never above
 * `maxMs`, the largest lag seen (exact); undefined when the histogram is empty.
 */
export function lagQuantile(buckets: readonly number[], q: number, maxMs: number): number | undefined {
  const total = buckets.reduce((sum, count) => sum + count, 0);
  if (total === 0) return undefined;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let index = 0; index < LAG_BUCKETS; index++) {
    const count = buckets[index] ?? 0;
    if (seen + count >= rank) {
      const low = index === 0 ? 0 : (LAG_BOUNDS_MS[index - 1] ?? 0);
      const high = Math.min(LAG_BOUNDS_MS[index] ?? maxMs, maxMs);
      const within = (rank - seen) / count;
      return Math.round(Math.min(maxMs, low + (Math.max(high, low) - low) * within));
    }
    seen += count;
  }
  return maxMs;
}
