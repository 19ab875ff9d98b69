import { LATE_STAMP_AFTER_MS } from '../../../domain/settle-window.ts';

/**
 * The stamp of each part of a mark given `now`: `now` for its first LATE_STAMP_AFTER_MS, then `now`
 * plus the time past that (this process's monotonic clock, so never a clock of another kind). A
 * mark of thousands of records, or one whose rounds wait for a concurrent writer's claims, stamps
 * each part near when it is stored, and so within a live stream's settle window of being told.
 */
export function markClock(now: number): () => number {
  const started = performance.now();
  return () => now + Math.max(0, Math.round(performance.now() - started) - LATE_STAMP_AFTER_MS);
}
