import type pg from 'pg';
import { inShrinkingBatches } from './shrinking-batches.ts';

/** A table the purge empties of expired rows, and its primary key (how a batch names its rows). */
export interface ExpiringTable {
  readonly table: string;
  readonly key: string;
  /**
   * A fixed condition rows must meet besides their expiry to go (SQL, no parameters): the
   * condition of the table's partial expiry index, so a batch reads that index alone.
   */
  readonly only?: string;
}

/**
 * Deletes the rows of `table` whose `expires_at` is at or before `before`, in batches of `batch`
 * read from its expiry index, until none is left; returns how many went. A row a writer holds is
 * skipped (SKIP LOCKED): the purge never waits for a row, so it never meets a writer crosswise (a
 * writer takes its rows in key order, the expiry index lists them in any order: a deadlock), and a
 * row a writer renews while the purge waited is never deleted (PostgreSQL would re-check only the
 * key after the wait). A skipped row that stays expired goes at the next purge. `before` is in the
 * column's own type: a time for a timestamptz column, epoch ms for a bigint one. A batch that
 * outlasts the statement timeout (1,000 events of large payloads to free) shrinks
 * (inShrinkingBatches): it stopped every later purge at the same oldest rows.
 */
export async function purgeInBatches(
  pool: pg.Pool,
  { table, key, only }: ExpiringTable,
  before: Date | number,
  batch: number,
): Promise<number> {
  const also = only === undefined ? '' : ` AND ${only}`;
  return inShrinkingBatches(batch, async (size) => {
    const { rowCount } = await pool.query(
      `DELETE FROM ${table} WHERE (${key}) IN (
         SELECT ${key} FROM ${table} WHERE expires_at <= $1${also} ORDER BY expires_at LIMIT $2
         FOR UPDATE SKIP LOCKED)`,
      [before, size],
    );
    return { read: rowCount ?? 0, gone: rowCount ?? 0 };
  });
}
