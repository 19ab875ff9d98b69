/**
 * Group commit: callers submit items one call at a time, and calls that arrive while earlier
 * flushes are in flight wait and go out together in the next one. Under light load every call is
 * flushed on its own at once (no timer, no added latency); under load the batches grow by
 * themselves to what the server can take. Used where a server's cost is per command rather than
 * per document: a round trip, a transaction, a wait for the write concern or a commit's flush each
 * time, whatever the command carries.
 *
 * DataLoader batches only the calls of one tick; concurrent queue jobs resume on different ticks,
 * so it would flush nearly every call alone.
 */
export interface GroupCommitOptions<T = unknown> {
  /** Items per flush at most (a call's items are never split across flushes). */
  maxBatch: number;
  /** Flushes running at once: more overlap round trips, fewer make bigger batches. */
  maxInFlight: number;
  /**
   * A second bound, on the items' weight (`weigh`, 1 each by default): where an item stands for
   * work of its own size (a call's activities), a flush of few items may still be too large.
   */
  maxWeight?: number;
  weigh?: (item: T) => number;
  /**
   * A failed flush of several calls runs again call by call, so a call that cannot succeed (bad
   * data the server rejects) fails alone instead of failing every call batched with it.
   */
  isolateFailures?: boolean;
}

/**
 * Flushes a batch: returns one result per item, in order. A rejection fails every call of the
 * batch (they are retried as a whole by their callers, or one by one with `isolateFailures`), so
 * the flush must be safe to repeat.
 */
export type Flush<T, R> = (items: readonly T[]) => Promise<readonly R[]>;

interface Waiting<T, R> {
  items: readonly T[];
  resolve: (results: R[]) => void;
  reject: (error: unknown) => void;
}

/** Returns `submit`: resolves with one result per item of the call, in order. */
export function groupCommit<T, R>(
  flush: Flush<T, R>,
  options: GroupCommitOptions<T>,
): (items: readonly T[]) => Promise<R[]> {
  const weigh = options.weigh ?? (() => 1);
  const weightOf = (items: readonly T[]) => items.reduce((sum, item) => sum + weigh(item), 0);
  const maxWeight = options.maxWeight ?? Infinity;
  const waiting: Waiting<T, R>[] = [];
  let inFlight = 0;
  let scheduled = false;

  const next = (): void => {
    scheduled = false;
    while (inFlight < options.maxInFlight && waiting.length > 0) {
      const batch: Waiting<T, R>[] = [];
      let size = 0;
      let weight = 0;
      while (waiting.length > 0) {
        const call = waiting[0] as Waiting<T, R>;
        const callWeight = weightOf(call.items);
        if (
          batch.length > 0 &&
          (size + call.items.length > options.maxBatch || weight + callWeight > maxWeight)
        )
          break;
        batch.push(call);
        waiting.shift();
        size += call.items.length;
        weight += callWeight;
      }
      inFlight += 1;
      void run(batch);
    }
  };

  const run = async (batch: readonly Waiting<T, R>[]): Promise<void> => {
    try {
      const results = await flush(batch.flatMap((call) => call.items));
      let offset = 0;
      for (const call of batch) {
        call.resolve(results.slice(offset, offset + call.items.length));
        offset += call.items.length;
      }
    } catch (error) {
      if (options.isolateFailures && batch.length > 1) await alone(batch);
      else for (const call of batch) call.reject(error);
    } finally {
      inFlight -= 1;
      next();
    }
  };

  const alone = async (batch: readonly Waiting<T, R>[]): Promise<void> => {
    for (const call of batch) {
      try {
        call.resolve([...(await flush(call.items))]);
      } catch (error) {
        call.reject(error);
      }
    }
  };

  return (items) => {
    if (items.length === 0) return Promise.resolve([]);
    return new Promise<R[]>((resolve, reject) => {
      waiting.push({ items, resolve, reject });
      // Calls made in the same tick (a job's several deliveries) share the first flush.
      if (!scheduled) {
        scheduled = true;
        queueMicrotask(next);
      }
    });
  };
}
