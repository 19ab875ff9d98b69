import type pg from 'pg';
import type { RecordRef } from './deleted-post-scenario.ts';

/**
 * How many of these records the PostgreSQL storage holds now, each looked up by its primary key
 * (the key is the storage's own `tray_record_key`): how a bench confirms by query what a job changed.
 */
export async function countRecords(sql: pg.Pool, refs: readonly RecordRef[]): Promise<number> {
  const found = await sql.query<{ count: number }>(
    `SELECT count(*)::int AS count
     FROM unnest($1::text[], $2::text[], $3::text[]) AS k(user_id, verb, target_id)
     JOIN tray_records t ON t.user_id = k.user_id AND t.key = tray_record_key(k.verb, k.target_id, k.user_id)`,
    [refs.map((ref) => ref.userId), refs.map((ref) => ref.verb), refs.map((ref) => ref.targetId)],
  );
  return found.rows[0]?.count ?? 0;
}
