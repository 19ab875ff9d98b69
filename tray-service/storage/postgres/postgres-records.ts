import type pg from 'pg';
import type { TrayVerb } from '../../domain/tray-record.ts';
import { encodeRecordKey } from '../../domain/record-key.ts';
import type { HistoryPage, TrayRecordsPort } from '../port.ts';
import { RECORD_COLUMNS, toTrayRecord, type RecordRow } from './record-row.ts';
import { withRetry } from './with-retry.ts';

/** `startAfter` absent or 1 (the contract's default) is the first page; 0 or less is past the end. */
const FIRST_PAGE = 1;
const NO_MORE_PAGES = 0;

/**
 * A v3 page: the user's records newest first with LIMIT, `pageSize` of them and as many again to
 * look ahead, so that the page's last group of equal lastUpdate (never split across pages: a v3
 * cursor is a bare timestamp) and whether anything lies below it are known from this one
 * statement, unless that group runs on past the look-ahead. The statement is planned for its
 * values on every call (unnamed): prepared, PostgreSQL would switch to a generic plan after five
 * runs, costed for the average user, and where most users have few records that plan
 * bitmap-scans and sorts the caller's whole tray for the LIMIT.
 */
const PAGE_SQL = `SELECT ${RECORD_COLUMNS} FROM tray_records
  WHERE user_id = $1 AND ($2::bigint IS NULL OR last_update < $2) AND expires_at > $3
  ORDER BY last_update DESC, key DESC LIMIT $4`;

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
      const upper = startAfter === undefined || startAfter === FIRST_PAGE ? null : startAfter;
      const limit = 2 * pageSize + 1;
      const head = await rows(PAGE_SQL, [userId, upper, now, limit]);
      if (head.length <= pageSize) return { records: head, nextPage: NO_MORE_PAGES };
      const last = head[pageSize - 1];
      if (!last) throw new Error('pageAfter: pageSize must be at least 1');
      let end = pageSize;
      while (head[end]?.lastUpdate === last.lastUpdate) end += 1;
      // A record below the page's last group: the page ends there and more follow.
      if (end < head.length) return { records: head.slice(0, end), nextPage: last.lastUpdate };
      // The user's records ran out within the look-ahead: the page is all of them.
      if (head.length < limit) return { records: head, nextPage: NO_MORE_PAGES };
      // The last group runs on past the look-ahead: the rest of it, then whether any lies below.
      const rest = await rows(
        `SELECT ${RECORD_COLUMNS} FROM tray_records
         WHERE user_id = $1 AND last_update = $2 AND key < $3 AND expires_at > $4
         ORDER BY key DESC`,
        [userId, last.lastUpdate, head[head.length - 1]?.key, now],
      );
      const more = await pool.query(
        `SELECT 1 FROM tray_records WHERE user_id = $1 AND last_update < $2 AND expires_at > $3
         ORDER BY last_update DESC LIMIT 1`,
        [userId, last.lastUpdate, now],
      );
      return { records: [...head, ...rest], nextPage: more.rowCount ? last.lastUpdate : NO_MORE_PAGES };
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

    // The rows are locked in key order, the order every writer of several records takes them in,
    // so a fan-out writing this user's records at once waits instead of deadlocking; an abort
    // still possible (a writer of another order) runs the statement again here.
    markAllRead: (userId, now) =>
      withRetry(() =>
        rows(
          `UPDATE tray_records SET has_read = true, changed_at = $2
           WHERE user_id = $1 AND key IN (
             SELECT key FROM tray_records
             WHERE user_id = $1 AND NOT has_read AND expires_at > $2
             ORDER BY key FOR UPDATE)
           AND NOT has_read AND expires_at > $2
           RETURNING ${RECORD_COLUMNS}`,
          [userId, now],
        ),
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
