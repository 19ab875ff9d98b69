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
}

/**
 * Runs a batch of one key. Each call brings its own; a batch runs with the `run` of its first
 * call. A rejection fails every call of the batch (their callers retry), so it must be safe to
 * repeat.
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
    { submit: (calls: readonly Call<T>[]) => Promise<undefined[]>; calls: number }
  >();
  const flush = async (calls: readonly Call<T>[]): Promise<undefined[]> => {
    await (calls[0] as Call<T>).run(calls.map((call) => call.item));
    return calls.map(() => undefined);
  };
  return async (key, item, run) => {
    let entry = keys.get(key);
    if (!entry) {
      entry = { submit: groupCommit(flush, { maxBatch: options.maxBatch, maxInFlight: 1 }), calls: 0 };
      keys.set(key, entry);
    }
    entry.calls += 1;
    try {
      await entry.submit([{ item, run }]);
    } finally {
      // The key's last call has run: nothing of it waits, so a later call may start afresh.
      entry.calls -= 1;
      if (entry.calls === 0) keys.delete(key);
    }
  };
}
