import type pg from 'pg';
import type { TrayRecord } from '../../domain/tray-record.ts';
import type { MarkedRecord } from '../port.ts';

/**
 * A mark's records, stamped anew at `clock` (the mark's markClock, read once its statement is
 * done) when that has moved past the time the mark was given (it waited for a fan-out's locks, for
 * a free connection, or ran again after a deadlock). Its statement stamps the rows with the time given and makes them visible only
 * when it commits, so a row written before a wait would be told seconds after its stamp, past a
 * live stream's settle window. Each record still in the state the mark left (its changed_at as
 * returned: unlike restamped, which takes a write's records however they changed since) gets the
 * new stamp; one a concurrent writer holds (SKIP LOCKED) or changed since is left as it is, as
 * that writer tells its own, later state. A restamp that
 * fails leaves them as they are: the mark is committed, and is told as it is.
 */
export async function stampedWhenLate<R extends TrayRecord>(
  pool: pg.Pool,
  userId: string,
  marked: MarkedRecord<R>[],
  now: number,
  clock: () => number,
): Promise<MarkedRecord<R>[]> {
  const at = clock();
  if (at === now || marked.length === 0) return marked;
  try {
    const { rows } = await pool.query<{ key: string; changed_at: string }>(
      `UPDATE tray_records t SET changed_at = GREATEST(t.changed_at + 1, $4)
       FROM (SELECT r.key FROM tray_records r
             JOIN unnest($2::text[], $3::bigint[]) AS m (key, stamp) ON r.key = m.key AND r.changed_at = m.stamp
             WHERE r.user_id = $1 ORDER BY r.key FOR UPDATE OF r SKIP LOCKED) AS s
       WHERE t.user_id = $1 AND t.key = s.key
       RETURNING t.key, t.changed_at`,
      [userId, marked.map((record) => record.key), marked.map((record) => record.changedAt), at],
    );
    const stamped = new Map(rows.map((row) => [row.key, Number(row.changed_at)]));
    return marked.map((record) => {
      const changedAt = stamped.get(record.key);
      return changedAt === undefined ? record : { ...record, changedAt };
    });
  } catch {
    return marked;
  }
}
