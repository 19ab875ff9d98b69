/**
 * The time a write stamps what it changes (WriteContext.clock), read each time it is called: the
 * write clock now, never before the context's `now`; `now` itself without a clock (tests pin it).
 * Read once a write holds its locks, or per round or page, so what lands after a long wait is
 * stamped when it lands (docs/live-tray.md#event-ids-and-resuming).
 */
export function writeClock(context: { now: number; clock?: (() => number) | undefined }): () => number {
  const { clock, now } = context;
  return clock ? () => Math.max(now, clock()) : () => now;
}
