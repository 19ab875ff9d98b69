export interface BatchLimits<T> {
  /** Items per batch at most. */
  maxItems: number;
  /** A batch closes before the item that would take its total weight past this (one item always fits). */
  maxWeight?: number;
  weight?: (item: T) => number;
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
 */
export function batchPerTick<T, R>(
  run: (items: readonly T[]) => Promise<readonly R[]>,
  limits: BatchLimits<T>,
): (item: T) => Promise<R> {
  const { maxItems, maxWeight = Infinity, weight = () => 0 } = limits;
  interface Waiting {
    item: T;
    resolve: (result: R) => void;
    reject: (error: unknown) => void;
  }
  let waiting: Waiting[] = [];

  const runBatch = async (batch: readonly Waiting[]) => {
    try {
      const results = await run(batch.map((entry) => entry.item));
      if (results.length !== batch.length) {
        throw new Error(`batch of ${batch.length} returned ${results.length} results`);
      }
      batch.forEach((entry, index) => entry.resolve(results[index] as R));
    } catch (error) {
      for (const entry of batch) entry.reject(error);
    }
  };

  const flush = () => {
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
      if (waiting.push({ item, resolve, reject }) === 1) setImmediate(flush);
    });
}
