/**
 * Prints one line of measured figures for RELIABILITY.md (`[figures] <scenario> {json}`), so the
 * document is filled from a real run: `npm run test:reliability | grep figures`.
 */
export function reportFigures(scenario: string, figures: Record<string, unknown>): void {
  process.stdout.write(`      [figures] ${scenario} ${JSON.stringify(figures)}\n`);
}

/** Counts of each value, keys sorted, e.g. HTTP statuses. */
export function tally(values: readonly (string | number)[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of [...values].sort()) counts[String(value)] = (counts[String(value)] ?? 0) + 1;
  return counts;
}

/** p50/p99/max of latencies in ms, rounded to 0.1 ms. */
export function latencySummary(ms: readonly number[]): { p50: number; p99: number; max: number } {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
  const round = (value: number) => Math.round(value * 10) / 10;
  return { p50: round(at(0.5)), p99: round(at(0.99)), max: round(sorted.at(-1) ?? 0) };
}
