import type pg from 'pg';
import type { TrayRecord } from '../../domain/tray-record.ts';

/**
 * A mark's records (or a snooze wake-up's, of many users), stamped anew at `clock` (the mark's markClock, read once its statement is
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
  marked: R[],
  now: number,
  clock: () => number,
): Promise<R[]> {
  const at = clock();
  if (at === now || marked.length === 0) return marked;
  // Each record by its user and key (a snooze wake-up's are many users'), rows locked in key order.
  const id = (record: { userId: string; key: string }) => JSON.stringify([record.userId, record.key]);
  try {
    const { rows } = await pool.query<{ user_id: string; key: string; changed_at: string }>(
      `UPDATE tray_records t SET changed_at = GREATEST(t.changed_at + 1, $4)
       FROM (SELECT r.user_id, r.key FROM tray_records r
             JOIN unnest($1::text[], $2::text[], $3::bigint[]) AS m (user_id, key, stamp)
               ON r.user_id = m.user_id AND r.key = m.key AND r.changed_at = m.stamp
             ORDER BY r.user_id, r.key FOR UPDATE OF r SKIP LOCKED) AS s
       WHERE t.user_id = s.user_id AND t.key = s.key
       RETURNING t.user_id, t.key, t.changed_at`,
      [
        marked.map((record) => record.userId),
        marked.map((record) => record.key),
        marked.map((record) => record.changedAt),
        at,
      ],
    );
    const stamped = new Map(
      rows.map((row) => [id({ userId: row.user_id, key: row.key }), Number(row.changed_at)]),
    );
    return marked.map((record) => {
      const changedAt = stamped.get(id(record));
      return changedAt === undefined ? record : { ...record, changedAt };
    });
  } catch {
    return marked;
  }
}
