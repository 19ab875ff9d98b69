import type pg from 'pg';
import type { LatestTimesPort } from '../port.ts';

/** The tables holding one latest time per user (migrations/0001_tray.sql). */
export type LatestTimesTable = 'tray_last_read' | 'tray_clears';

/**
 * One time per user that only moves forward (last read, last delete-all): one upsert keeping the
 * greater of the stored and the new time, atomic under concurrent calls.
 */
export function createPostgresLatestTimes(pool: pg.Pool, table: LatestTimesTable): LatestTimesPort {
  // The name is one of two literals (the type), never caller text: safe to put in the statement.
  const name = table === 'tray_clears' ? 'tray_clears' : 'tray_last_read';
  return {
    async latest(userId) {
      const result = await pool.query<{ at: string }>(`SELECT at FROM ${name} WHERE user_id = $1`, [userId]);
      return Number(result.rows[0]?.at ?? 0);
    },
    async record(userId, at) {
      await pool.query(
        `INSERT INTO ${name} (user_id, at) VALUES ($1, $2)
         ON CONFLICT (user_id) DO UPDATE SET at = excluded.at WHERE ${name}.at < excluded.at`,
        [userId, at],
      );
    },
  };
}
