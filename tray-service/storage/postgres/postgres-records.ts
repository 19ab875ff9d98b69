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
      const result = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM tray_records
         WHERE user_id = $1 AND NOT has_read AND unread_at > $2 AND expires_at > $3`,
        [userId, lastReadAt, now],
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
      const upper = startAfter === undefined || startAfter === FIRST_PAGE ? null : startAfter;
      // One row more than the page shows whether the page's last group of equal lastUpdate goes on.
      const head = await rows(
        `SELECT ${RECORD_COLUMNS} FROM tray_records
         WHERE user_id = $1 AND ($2::bigint IS NULL OR last_update < $2) AND expires_at > $3
         ORDER BY last_update DESC, key DESC LIMIT $4`,
        [userId, upper, now, pageSize + 1],
      );
      if (head.length <= pageSize) return { records: head, nextPage: NO_MORE_PAGES };
      const last = head[pageSize - 1];
      const after = head[pageSize];
      if (!last || !after) throw new Error('pageAfter: pageSize must be at least 1');
      const records = head.slice(0, pageSize);
      if (after.lastUpdate < last.lastUpdate) return { records, nextPage: last.lastUpdate };
      // A v3 cursor is a bare timestamp: a group of equal lastUpdate is never split across pages.
      const rest = await rows(
        `SELECT ${RECORD_COLUMNS} FROM tray_records
         WHERE user_id = $1 AND last_update = $2 AND key < $3 AND expires_at > $4
         ORDER BY key DESC`,
        [userId, last.lastUpdate, last.key, now],
      );
      const more = await pool.query(
        `SELECT 1 FROM tray_records WHERE user_id = $1 AND last_update < $2 AND expires_at > $3
         ORDER BY last_update DESC LIMIT 1`,
        [userId, last.lastUpdate, now],
      );
      return {
        records: [...records, ...rest],
        nextPage: more.rowCount ? last.lastUpdate : NO_MORE_PAGES,
      };
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
