/**
 * Batches per key: calls of one key that arrive while that key's batch runs wait, and go together
 * in its next batch; different keys run independently, and one key's batches never overlap. No
 * timer: a lone call runs at once (calls of the same tick share it). For work that costs about the
 * same for many items as for one, and would otherwise run once per item in a row: a community's
 * post fan-out rewrites every member's record whether it carries one new post or twenty.
 */
export interface KeyedBatchOptions {
  /** Items per batch at most. */
  maxBatch: number;
}

/**
 * Runs a batch of one key. Each call brings its own; a batch runs with the `run` of its first
 * call. A rejection fails every call of the batch (their callers retry), so it must be safe to
 * repeat.
 */
export type RunBatch<T> = (items: readonly T[]) => Promise<void>;

interface Waiting<T> {
  item: T;
  run: RunBatch<T>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Returns `submit(key, item, run)`: resolves once a batch holding `item` has run. */
export function keyedBatches<T>(
  options: KeyedBatchOptions,
): (key: string, item: T, run: RunBatch<T>) => Promise<void> {
  // A key is here while it has a batch running or calls waiting; its queue of waiting calls.
  const keys = new Map<string, Waiting<T>[]>();

  const drain = async (key: string, waiting: Waiting<T>[]): Promise<void> => {
    // Calls made in this same tick (one job's several posts) join the first batch.
    await Promise.resolve();
    while (waiting.length > 0) {
      const batch = waiting.splice(0, options.maxBatch);
      try {
        await (batch[0] as Waiting<T>).run(batch.map((call) => call.item));
        for (const call of batch) call.resolve();
      } catch (error) {
        for (const call of batch) call.reject(error);
      }
    }
    keys.delete(key);
  };

  return (key, item, run) =>
    new Promise<void>((resolve, reject) => {
      const call = { item, run, resolve, reject };
      const waiting = keys.get(key);
      if (waiting) {
        waiting.push(call);
        return;
      }
      const fresh = [call];
      keys.set(key, fresh);
      void drain(key, fresh);
    });
}
