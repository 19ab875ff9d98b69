import type pg from 'pg';
import type { DeletedUsersPort } from '../port.ts';

/**
 * Removes what the users kept for themselves (docs/tray-rules.md#deleted-users): their mutes
 * (ended spans too) and last-read times; others' mutes of them are the others'. Called by the
 * deletion after its transaction committed the profile, never inside it: a mute written while
 * that transaction ran, which its delete could not see, is then either deleted here or finds the
 * profile deleted (DeletedUsersPort).
 */
export async function forgetKeptState(
  client: pg.Pool | pg.PoolClient,
  ids: readonly string[],
): Promise<void> {
  if (ids.length === 0) return;
  for (const table of ['tray_mutes', 'tray_last_read'])
    await client.query(`DELETE FROM ${table} WHERE user_id = ANY($1::text[])`, [ids]);
}

/** Deleted users as tray_profiles marks them (migrations/0001_tray.sql). */
export function createPostgresDeletedUsers(pool: pg.Pool): DeletedUsersPort {
  return {
    async isDeleted(userId) {
      const result = await pool.query('SELECT 1 FROM tray_profiles WHERE user_id = $1 AND deleted', [userId]);
      return (result.rowCount ?? 0) > 0;
    },
    forgetKept: (userIds) => forgetKeptState(pool, userIds),
  };
}
