/**
 * Redis calls one connection has in flight at once for a bulk task (a heartbeat's lease renewals, a
 * resync's lost changes). Sent all at once, each call waits behind every one sent before it: with
 * 60,000 a round took 1.1-1.9 s and the later calls ran past a Redis call's budget (1 s), failed,
 * and tripped the breaker every other call of that connection shares (rate limits, tickets,
 * publishes; BENCHMARKS.md, "Live tray").
 */
export const CALLS_IN_FLIGHT = 1_000;

/**
 * Calls `call` for each item, at most `inFlight` (CALLS_IN_FLIGHT by default: small calls) at once,
 * a batch after the other; rejects with the first failure of a batch once that batch has settled
 * (later batches are not started).
 */
export async function inFlightBatches<T>(
  items: readonly T[],
  call: (item: T, index: number) => Promise<void>,
  inFlight = CALLS_IN_FLIGHT,
): Promise<void> {
  for (let start = 0; start < items.length; start += inFlight) {
    const batch = items.slice(start, start + inFlight);
    const settled = await Promise.allSettled(batch.map((item, offset) => call(item, start + offset)));
    const failed = settled.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
  }
}
