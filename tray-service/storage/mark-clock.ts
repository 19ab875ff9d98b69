import { LATE_STAMP_AFTER_MS } from '../domain/settle-window.ts';

/**
 * The stamp of what a mark writes, given the `now` it was called with: `now` for its first
 * LATE_STAMP_AFTER_MS, then `now` plus the time past that (this process's monotonic clock, so never
 * a clock of another kind). A mark that waited (a fan-out's locks, a concurrent writer's claims, a
 * free connection) or writes thousands of records stamps what it stores near when it is stored,
 * and so within a live stream's settle window of being told. Both adapters' marks read it: MongoDB
 * per bulk, PostgreSQL once its statement is done (stampedWhenLate).
 */
export function markClock(now: number): () => number {
  const started = performance.now();
  return () => now + Math.max(0, Math.round(performance.now() - started) - LATE_STAMP_AFTER_MS);
}
