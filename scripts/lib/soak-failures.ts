import type { SoakBaselineMinute } from './soak-baseline.ts';

/** One minute of a soak run, as bench-soak.ts prints it (a JSON line a minute), with its baseline. */
export interface SoakMinute extends SoakBaselineMinute {
  minute: number;
  sent: number;
  /** Deliveries not answered 200 (refused, failed, unanswered): their times are not in ackP99Ms. */
  non200: number;
  rssMb: number[];
  /** V8's heap in use: what a leak of JavaScript objects grows (RSS also moves with the allocator). */
  heapMb: number[];
  loopP99Ms: number[];
  ackP99Ms: number;
  apiP99Ms: number;
  /** History reads answered 200, whose times apiP99Ms takes... */
  apiCalls: number;
  /** ...and those answered otherwise or not at all, which it leaves out. */
  apiFailed: number;
  lagP99Ms: number;
  lagCount: number;
  /** Acknowledged deliveries whose record reached no stream within a minute (dropped this minute). */
  neverArrived: number;
}

/** What went wrong in the measured minutes (the first, warm-up, left out), one line each. */
export function soakFailures(measured: readonly SoakMinute[]): string[] {
  const failures: string[] = [];
  const refused = measured.reduce((sum, m) => sum + m.non200, 0);
  if (refused > 0) failures.push(`${refused} deliveries were not acknowledged with 200`);
  const failedReads = measured.reduce((sum, m) => sum + m.apiFailed, 0);
  if (failedReads > 0) failures.push(`${failedReads} history reads failed`);
  const lost = measured.reduce((sum, m) => sum + m.neverArrived, 0);
  if (lost > 0) failures.push(`${lost} acknowledged deliveries reached no stream within a minute`);
  const silent = measured.filter((m) => m.lagCount === 0).map((m) => m.minute);
  if (silent.length > 0) failures.push(`no stream record arrived in minute ${silent.join(', ')}`);
  const unmeasured = measured.filter((m) => m.bareCalls === 0).map((m) => m.minute);
  if (unmeasured.length > 0)
    failures.push(`the baseline timed no bare call in minute ${unmeasured.join(', ')}`);
  return failures;
}
