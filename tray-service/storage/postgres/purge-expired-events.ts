import type pg from 'pg';

/** Events deleted per statement: short statements, short locks, bounded WAL per transaction. */
export const PURGE_BATCH = 1_000;

/**
 * Deletes the events expired at `now`, in batches read from the expiry index (oldest expiry
 * first), until none is left, then the per-minute rollups whose events have all expired; returns
 * how many events went. Readers skip expired events already, so the purge only reclaims space and
 * may run late or be interrupted.
 */
export async function purgeExpiredEvents(pool: pg.Pool, now: Date, batch = PURGE_BATCH): Promise<number> {
  let purged = 0;
  for (;;) {
    const { rowCount } = await pool.query(
      `DELETE FROM stored_events WHERE key IN (
         SELECT key FROM stored_events WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2)`,
      [now, batch],
    );
    purged += rowCount ?? 0;
    if ((rowCount ?? 0) < batch) break;
  }
  // A few thousand rows a day each: one statement apiece.
  await pool.query('DELETE FROM stored_event_minutes WHERE expires_at <= $1', [now]);
  await pool.query('DELETE FROM stored_event_lag_minutes WHERE expires_at <= $1', [now]);
  return purged;
}
