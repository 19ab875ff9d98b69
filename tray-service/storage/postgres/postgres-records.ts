import type pg from 'pg';
import type { TrayVerb } from '../../domain/tray-record.ts';
import { encodeRecordKey } from '../../domain/record-key.ts';
import type { HistoryPage, TrayRecordsPort } from '../port.ts';
import { RECORD_COLUMNS, toTrayRecord, type RecordRow } from './record-row.ts';

/** `startAfter` absent or 1 (the contract's default) is the first page; 0 or less is past the end. */
const FIRST_PAGE = 1;
const NO_MORE_PAGES = 0;

/**
 * A v3 page in one statement: the first `pageSize` ($3) records and every record sharing the
 * lastUpdate of the last of them (WITH TIES), so a group of equal lastUpdate is never split across
 * pages (a v3 cursor is a bare timestamp); ordered by key within a group; and per row `more`:
 * whether any record lies below it (an index probe that stops at its first entry), read from the
 * page's last row. The rows come from the user's newest-first index with LIMIT, so at most the
 * page is sorted. From the top or below a cursor ($4): two texts, each planned for its values on
 * every call (unnamed). Prepared, PostgreSQL would switch to a generic plan after five runs,
 * costed for the average user: where most users have few records, that plan bitmap-scans and
 * sorts the caller's whole tray for the LIMIT.
 */
const pageStatement = (belowCursor: boolean) => `SELECT page.*,
    EXISTS (SELECT 1 FROM tray_records below WHERE below.user_id = $1
            AND below.last_update < page.last_update AND below.expires_at > $2) AS more
  FROM (SELECT ${RECORD_COLUMNS} FROM tray_records
        WHERE user_id = $1 AND expires_at > $2${belowCursor ? ' AND last_update < $4' : ''}
        ORDER BY last_update DESC FETCH FIRST $3 ROWS WITH TIES) AS page
  ORDER BY page.last_update DESC, page.key DESC`;
const FIRST_PAGE_SQL = pageStatement(false);
const PAGE_BELOW_SQL = pageStatement(true);

/**
 * The unread count, prepared once per connection (named): planning it again on every request
 * cost about as much as running it, and its generic plan reads the same index entries as any
 * custom one (a count reads all the caller's unread entries, whatever the plan). 'recorded' ($2
 * null): the user's last-read time is read by the same statement.
 */
const COUNT_UNREAD_STATEMENT = {
  name: 'tray_count_unread',
  text: `SELECT count(*)::int AS n FROM tray_records
    WHERE user_id = $1 AND NOT has_read AND expires_at > $3
      AND unread_at > COALESCE($2::bigint, (SELECT at FROM tray_last_read WHERE user_id = $1), 0)`,
};

/**
 * The read side of tray_records. Every query takes the user id and runs on one of the user's
 * indexes (migrations/0001_tray.sql) with a LIMIT, so a page or a count costs the same whatever
 * the density of the user's records; each read the API makes is one statement, one round trip.
 * Expired records are filtered here too: the purge may lag.
 */
export function createPostgresRecords(pool: pg.Pool): TrayRecordsPort {
  const rows = async (sql: string, params: unknown[]) =>
    (await pool.query<RecordRow>(sql, params)).rows.map(toTrayRecord);

  return {
    async countUnread(userId, lastReadAt, now) {
      const result = await pool.query<{ n: number }>({
        ...COUNT_UNREAD_STATEMENT,
        values: [userId, lastReadAt === 'recorded' ? null : lastReadAt, now],
      });
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
      const first = startAfter === undefined || startAfter === FIRST_PAGE;
      const result = await pool.query<RecordRow & { more: boolean }>(
        first ? FIRST_PAGE_SQL : PAGE_BELOW_SQL,
        first ? [userId, now, pageSize] : [userId, now, pageSize, startAfter],
      );
      const records = result.rows.map(toTrayRecord);
      const last = records.at(-1);
      return { records, nextPage: last && result.rows.at(-1)?.more ? last.lastUpdate : NO_MORE_PAGES };
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
