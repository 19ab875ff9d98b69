import type pg from 'pg';
import { inTransaction } from './in-transaction.ts';
import { lockKeys } from './lock-keys.ts';

/** Keys locked per transaction: far below what the server's lock table holds for one transaction. */
export const KEYS_PER_WAIT = 1_000;

/**
 * Returns once every write that held one of `keys` (record groups: lock-keys.ts) when this was
 * called has committed or rolled back: each batch of keys is taken shared, which waits for the
 * writers holding them exclusively, and let go at once. A write that takes one of them later
 * begins after the call, so its statements see everything committed before it. Batched, so a key
 * set of any size never needs more locks at once than one transaction may hold.
 */
export async function waitForWriters(pool: pg.Pool, keys: readonly string[]): Promise<void> {
  const all = [...new Set(keys)];
  for (let start = 0; start < all.length; start += KEYS_PER_WAIT)
    await inTransaction(pool, (client) => lockKeys(client, [], all.slice(start, start + KEYS_PER_WAIT)));
}
