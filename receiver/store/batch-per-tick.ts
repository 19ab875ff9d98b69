export interface BatchLimits<T> {
  /** Items per batch at most. */
  maxItems: number;
  /** A batch closes before the item that would take its total weight past this (one item always fits). */
  maxWeight?: number;
  weight?: (item: T) => number;
  /**
   * While this many batches are in flight, new items wait; once fewer are, everything waiting is
   * sent at the next turn (in batches within the limits above). Default: no limit, a batch per turn.
   */
  maxInFlight?: number;
  /** Items wait for a call in flight at most this long, then go anyway (default: no limit). */
  maxHoldMs?: number;
}

/**
 * Wraps a batch operation so that single calls made during one turn of the event loop run as
 * batches (within `limits`), after the turn's I/O callbacks. Each caller gets its own
 * item's result, in call order; if the batch fails, every caller in it gets the error.
 *
 * Why: the receiver enqueues one event per request, and a burst of requests completes in the same
 * turn. One script call for the burst instead of one per request saves ioredis's per-command work
 * and Redis's per-call work (BENCHMARKS.md, "Receiver"). Waiting for setImmediate adds no latency
 * that matters: the requests' own replies are only written in a later turn anyway.
 *
 * With `maxInFlight`, items that arrive while that many calls are in flight wait for one of them to
 * settle and then go together, as a database groups commits: under load a call carries the
 * requests of several turns, so the per-call work is shared by more items just when the process
 * is busiest, while at a low rate nothing is in flight and an item goes at the next turn as
 * without it. An item waits at most `maxHoldMs`, or as long as the call in flight takes.
 */
export function batchPerTick<T, R>(
  run: (items: readonly T[]) => Promise<readonly R[]>,
  limits: BatchLimits<T>,
): (item: T) => Promise<R> {
  const { maxItems, maxWeight = Infinity, weight = () => 0, maxInFlight = Infinity, maxHoldMs } = limits;
  interface Waiting {
    item: T;
    resolve: (result: R) => void;
    reject: (error: unknown) => void;
  }
  let waiting: Waiting[] = [];
  let inFlight = 0;
  let scheduled = false;
  let hold: NodeJS.Timeout | undefined;

  const flushNextTurn = () => {
    if (hold) clearTimeout(hold);
    hold = undefined;
    if (scheduled || waiting.length === 0) return;
    scheduled = true;
    setImmediate(flush);
  };
  const schedule = () => {
    if (inFlight < maxInFlight) flushNextTurn();
    else if (!hold && maxHoldMs !== undefined && waiting.length > 0)
      hold = setTimeout(flushNextTurn, maxHoldMs);
  };

  const runBatch = async (batch: readonly Waiting[]) => {
    inFlight += 1;
    try {
      const results = await run(batch.map((entry) => entry.item));
      if (results.length !== batch.length) {
        throw new Error(`batch of ${batch.length} returned ${results.length} results`);
      }
      batch.forEach((entry, index) => entry.resolve(results[index] as R));
    } catch (error) {
      for (const entry of batch) entry.reject(error);
    } finally {
      inFlight -= 1;
      schedule();
    }
  };

  const flush = () => {
    scheduled = false;
    const all = waiting;
    waiting = [];
    let batch: Waiting[] = [];
    let batchWeight = 0;
    for (const entry of all) {
      const itemWeight = weight(entry.item);
      if (batch.length > 0 && (batch.length === maxItems || batchWeight + itemWeight > maxWeight)) {
        void runBatch(batch);
        batch = [];
        batchWeight = 0;
      }
      batch.push(entry);
      batchWeight += itemWeight;
    }
    if (batch.length > 0) void runBatch(batch);
  };

  return (item) =>
    new Promise<R>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      schedule();
    });
}
