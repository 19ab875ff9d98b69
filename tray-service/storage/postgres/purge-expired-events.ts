import type pg from 'pg';
import { purgeEach, type PurgeOutcome } from '../purge-each.ts';
import { purgeInBatches, type ExpiringTable } from './purge-in-batches.ts';

/** Events deleted per statement: short statements, short locks, bounded WAL per transaction. */
export const PURGE_BATCH = 1_000;

/**
 * The moderation decisions, which expire with their event (the expiry copied from it when saved,
 * migration 0012), except those still `pending` delivery: a retry may be hours away, and the
 * delivery reads the decision it sends. Delivered or given up (`failed`), the next purge takes them.
 */
const DECISIONS: ExpiringTable = { table: 'moderation_decisions', key: 'id', only: "delivery <> 'pending'" };

/**
 * Deletes the events expired at `now`, in batches read from the expiry index (oldest expiry
 * first), until none is left, then their moderation decisions and the per-minute rollups whose events have all expired; returns
 * how many events went, and the tables it could not purge. Readers skip expired events already,
 * so the purge only reclaims space and may run late or be interrupted.
 *
 * A batch locks its rows as it reads them and skips a row a writer holds (purgeInBatches), as the
 * records' purge does. A redelivery replaces an expired row the purge has not reached yet (it
 * counts as gone): read without the lock, that row was deleted once the redelivery committed,
 * though it had just been stored with 30 days to live and counted in its minute, since PostgreSQL
 * re-checks only `key IN (...)` after the wait. Skipping also means the purge never waits for a
 * row, so it cannot meet a batch of stores crosswise (they lock keys in key order, the expiry
 * index lists them in any order: a deadlock). A skipped row that stays expired goes next time.
 */
export async function purgeExpiredEvents(
  pool: pg.Pool,
  now: Date,
  batch = PURGE_BATCH,
): Promise<PurgeOutcome> {
  // Each table on its own (purgeEach): minutes are purged even when the events' purge failed.
  return purgeEach(
    [
      {
        table: 'stored_events',
        purge: () => purgeInBatches(pool, { table: 'stored_events', key: 'key' }, now, batch),
      },
      { table: DECISIONS.table, purge: () => purgeInBatches(pool, DECISIONS, now, batch) },
      // A few thousand rows a day each: one statement apiece.
      ...['stored_event_minutes', 'stored_event_lag_minutes'].map((table) => ({
        table,
        purge: async () =>
          (await pool.query(`DELETE FROM ${table} WHERE expires_at <= $1`, [now])).rowCount ?? 0,
      })),
    ],
    'stored_events',
  );
}
