import { groupCommit } from './group-commit.ts';

/**
 * Batches per key: calls of one key that arrive while that key's batch runs wait, and go together
 * in its next batch; different keys run independently, and one key's batches never overlap. A
 * group commit (group-commit.ts) per key, one batch in flight, kept only while the key has calls:
 * no timer, a lone call runs at once (calls of the same tick share it). For work that costs about
 * the same for many items as for one, and would otherwise run once per item in a row: a
 * community's post fan-out rewrites every member's record whether it carries one new post or twenty.
 */
export interface KeyedBatchOptions {
  /** Items per batch at most. */
  maxBatch: number;
  /**
   * How long a key's first call waits for more calls of its key before its batch runs (none by
   * default). For work that costs nearly as much for one item as for many and whose items arrive
   * a few milliseconds apart, so the first of a burst would otherwise run alone and the rest after
   * it: the burst would cost two runs instead of one.
   */
  gatherMs?: number;
}

/**
 * Runs a batch of one key. Each call brings its own; a batch runs with the `run` of its first
 * call. A rejected batch of several runs again call by call, each with its own `run`, before the
 * key's next batch: an item that cannot succeed (a poison post) fails its own call alone instead of
 * every call gathered with it, on every retry of theirs. So it must be safe to repeat.
 */
export type RunBatch<T> = (items: readonly T[]) => Promise<void>;

interface Call<T> {
  item: T;
  run: RunBatch<T>;
}

/** Returns `submit(key, item, run)`: resolves once a batch holding `item` has run. */
export function keyedBatches<T>(
  options: KeyedBatchOptions,
): (key: string, item: T, run: RunBatch<T>) => Promise<void> {
  const keys = new Map<
    string,
    {
      submit: (calls: readonly Call<T>[]) => Promise<undefined[]>;
      calls: number;
      /** Resolves once the key's first call has waited gatherMs; its waiting calls go at once. */
      gathered: Promise<void>;
    }
  >();
  const flush = async (calls: readonly Call<T>[]): Promise<undefined[]> => {
    await (calls[0] as Call<T>).run(calls.map((call) => call.item));
    return calls.map(() => undefined);
  };
  return async (key, item, run) => {
    let entry = keys.get(key);
    if (!entry) {
      const gatherMs = options.gatherMs ?? 0;
      entry = {
        submit: groupCommit(flush, { maxBatch: options.maxBatch, maxInFlight: 1, isolateFailures: true }),
        calls: 0,
        gathered: gatherMs > 0 ? new Promise((resolve) => setTimeout(resolve, gatherMs)) : Promise.resolve(),
      };
      keys.set(key, entry);
    }
    entry.calls += 1;
    try {
      // The calls waiting for the gather resume in the same tick, so they share the first batch.
      await entry.gathered;
      await entry.submit([{ item, run }]);
    } finally {
      // The key's last call has run: nothing of it waits, so a later call may start afresh.
      entry.calls -= 1;
      if (entry.calls === 0) keys.delete(key);
    }
  };
}
