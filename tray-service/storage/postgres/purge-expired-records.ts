import type pg from 'pg';

/**
 * Deletes what expired by `now`: records (TRAY_RETENTION_DAYS after their lastUpdate), the group
 * actors and community posts of the same retention. Readers already skip expired records, so the
 * purge only reclaims space. Returns how many records went.
 */
export async function purgeExpiredRecords(pool: pg.Pool, now: Date): Promise<number> {
  const at = now.getTime();
  const records = await pool.query('DELETE FROM tray_records WHERE expires_at <= $1', [at]);
  await pool.query('DELETE FROM tray_target_actors WHERE expires_at <= $1', [at]);
  await pool.query('DELETE FROM tray_community_posts WHERE expires_at <= $1', [at]);
  return records.rowCount ?? 0;
}
