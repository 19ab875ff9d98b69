import type pg from 'pg';
import type { TrayVerb } from '../../domain/tray-record.ts';
import { encodeRecordKey } from '../../domain/record-key.ts';
import type { HistoryPage, TrayRecordsPort } from '../port.ts';
import { RECORD_COLUMNS, toTrayRecord, type RecordRow } from './record-row.ts';

/** `startAfter` absent or 1 (the contract's default) is the first page; 0 or less is past the end. */
const FIRST_PAGE = 1;
const NO_MORE_PAGES = 0;

/**
 * The read side of tray_records. Every query takes the user id and runs on one of the user's
 * indexes (migrations/0001_tray.sql) with a LIMIT, so a page or a count costs the same whatever
 * the density of the user's records. Expired records are filtered here too: the purge may lag.
 */
export function createPostgresRecords(pool: pg.Pool): TrayRecordsPort {
  const rows = async (sql: string, params: unknown[]) =>
    (await pool.query<RecordRow>(sql, params)).rows.map(toTrayRecord);

  return {
    async countUnread(userId, lastReadAt, now) {
      // 'recorded': the user's last-read time is read by the same statement, one round trip not two.
      const result = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM tray_records
         WHERE user_id = $1 AND NOT has_read AND expires_at > $3
           AND unread_at > COALESCE($2::bigint, (SELECT at FROM tray_last_read WHERE user_id = $1), 0)`,
        [userId, lastReadAt === 'recorded' ? null : lastReadAt, now],
      );
      return result.rows[0]?.n ?? 0;
    },

    async count(userId, now, excludeVerbs = []) {
      const result = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM tray_records
         WHERE user_id = $1 AND expires_at > $2 AND verb <> ALL($3::text[])`,
        [userId, now, excludeVerbs],
      );
      return result.rows[0]?.n ?? 0;
    },

    async pageAfter(userId, startAfter, pageSize, now): Promise<HistoryPage> {
      if (startAfter !== undefined && startAfter !== FIRST_PAGE && startAfter <= NO_MORE_PAGES)
        return { records: [], nextPage: NO_MORE_PAGES };
      if (pageSize < 1) throw new Error('pageAfter: pageSize must be at least 1');
      const upper = startAfter === undefined || startAfter === FIRST_PAGE ? null : startAfter;
      // One statement, one round trip: the page is every record from the newest of the first
      // `pageSize` down to the lastUpdate of the last of them, so a group of equal lastUpdate is
      // never split across pages (a v3 cursor is a bare timestamp); `more` says whether any record
      // lies below. Both bounds are InitPlans, run once; as a range they let the planner read the
      // rows in index order, unsorted.
      const result = await pool.query<RecordRow & { more: boolean }>(
        `WITH bound AS (
           SELECT min(last_update) AS lowest, max(last_update) AS highest FROM (
             SELECT last_update FROM tray_records
             WHERE user_id = $1 AND ($2::bigint IS NULL OR last_update < $2) AND expires_at > $3
             ORDER BY last_update DESC, key DESC LIMIT $4) AS head)
         SELECT ${RECORD_COLUMNS},
           EXISTS (SELECT 1 FROM tray_records WHERE user_id = $1
                   AND last_update < (SELECT lowest FROM bound) AND expires_at > $3) AS more
         FROM tray_records
         WHERE user_id = $1 AND expires_at > $3
           AND last_update BETWEEN (SELECT lowest FROM bound) AND (SELECT highest FROM bound)
         ORDER BY last_update DESC, key DESC`,
        [userId, upper, now, pageSize],
      );
      const records = result.rows.map(toTrayRecord);
      const last = records.at(-1);
      return { records, nextPage: last && result.rows[0]?.more ? last.lastUpdate : NO_MORE_PAGES };
    },

    pageNumber: (userId, page, pageSize, now, excludeVerbs) =>
      rows(
        `SELECT ${RECORD_COLUMNS} FROM tray_records
         WHERE user_id = $1 AND expires_at > $2 AND verb <> ALL($3::text[])
         ORDER BY last_update DESC, key DESC OFFSET $4 LIMIT $5`,
        [userId, now, excludeVerbs, Math.max(0, (page - 1) * pageSize), pageSize],
      ),

    async markRead(userId, verb: TrayVerb, targetId, now) {
      const key = encodeRecordKey({ verb, targetId, userId });
      // Only the read flag and changedAt: a worker writing the same record at once keeps its actors.
      const changed = await rows(
        `UPDATE tray_records SET has_read = true, changed_at = $3
         WHERE user_id = $1 AND key = $2 AND expires_at > $3 AND NOT has_read
         RETURNING ${RECORD_COLUMNS}`,
        [userId, key, now],
      );
      if (changed.length > 0) return { found: true, changed };
      const exists = await pool.query(
        'SELECT 1 FROM tray_records WHERE user_id = $1 AND key = $2 AND expires_at > $3',
        [userId, key, now],
      );
      return { found: (exists.rowCount ?? 0) > 0, changed: [] };
    },

    markAllRead: (userId, now) =>
      rows(
        `UPDATE tray_records SET has_read = true, changed_at = $2
         WHERE user_id = $1 AND NOT has_read AND expires_at > $2
         RETURNING ${RECORD_COLUMNS}`,
        [userId, now],
      ),

    async deleteAll(userId) {
      const result = await pool.query('DELETE FROM tray_records WHERE user_id = $1', [userId]);
      return result.rowCount ?? 0;
    },

    changedSince: (userId, since, now) =>
      rows(
        `SELECT ${RECORD_COLUMNS} FROM tray_records
         WHERE user_id = $1 AND changed_at > $2 AND expires_at > $3
         ORDER BY changed_at, key`,
        [userId, since, now],
      ),
  };
}
