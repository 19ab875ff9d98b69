import type pg from 'pg';
import type { TrayVerb } from '../../domain/tray-record.ts';
import { encodeRecordKey } from '../../domain/record-key.ts';
import type { HistoryPage, TrayRecordsPort } from '../port.ts';
import { INBOX_COLUMNS, toInboxRecord, type InboxRow } from './inbox-row.ts';
import {
  INBOX_OR_AWAY,
  MARKED_FROM,
  markedAsRead,
  withChangedBefore,
  type ChangedBeforeRow,
} from './marked-row.ts';
import { RECORD_COLUMNS, toTrayRecord, type RecordRow } from './record-row.ts';
import { stampedWhenLate } from './stamped-when-late.ts';
import { markClock } from '../mark-clock.ts';
import { viewPage } from './view-page.ts';
import { withRetry } from './with-retry.ts';

/** The platform's pages and counts are the inbox's (docs/tray-rules.md#inbox): a partial index each. */
const IN_INBOX = 'in_inbox';

/**
 * The unread count, prepared once per connection (named): planning it again on every request
 * cost about as much as running it, and its generic plan reads the same index entries as any
 * custom one (a count reads all the caller's unread entries, whatever the plan). 'recorded' ($2
 * null): the user's last-read time is read by the same statement.
 */
const COUNT_UNREAD_STATEMENT = {
  name: 'tray_count_unread',
  text: `SELECT count(*)::int AS n FROM tray_records
    WHERE user_id = $1 AND NOT has_read AND in_inbox AND expires_at > $3
      AND unread_at > COALESCE($2::bigint, (SELECT at FROM tray_last_read WHERE user_id = $1), 0)`,
};

/** Mark-all-as-read's records: the unread ones in any view (INBOX_OR_AWAY: their partial indexes). */
const unread = markedAsRead(`NOT has_read AND expires_at > $2 AND ${INBOX_OR_AWAY}`);

/**
 * The read side of tray_records. Every query takes the user id and runs on one of the user's
 * indexes (migrations/0001_tray.sql, 0005_inbox.sql, 0025_records_changes.sql); a page has a LIMIT,
 * so it costs the same whatever the density of the user's records (a v2 page by number also walks
 * the entries before it: its OFFSET). A count (a page's totalPages) reads the user's entries of its index,
 * which the API caches for a few seconds per instance. Each read the API makes is one statement,
 * one round trip. Expired records are filtered here too: the purge may lag.
 */
export function createPostgresRecords(pool: pg.Pool): TrayRecordsPort {
  const rows = async (sql: string, params: unknown[]) =>
    (await pool.query<RecordRow>(sql, params)).rows.map(toTrayRecord);
  const marked = async (sql: string, params: unknown[]) =>
    (await pool.query<RecordRow & ChangedBeforeRow>(sql, params)).rows.map((row) =>
      withChangedBefore(toTrayRecord(row), row),
    );

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
         WHERE user_id = $1 AND in_inbox AND expires_at > $2 AND verb <> ALL($3::text[])`,
        [userId, now, excludeVerbs],
      );
      return result.rows[0]?.n ?? 0;
    },

    pageAfter: (userId, startAfter, pageSize, now): Promise<HistoryPage> =>
      viewPage(
        pool,
        toTrayRecord,
        { columns: RECORD_COLUMNS, condition: IN_INBOX },
        userId,
        startAfter,
        pageSize,
        now,
      ),

    pageNumber: (userId, page, pageSize, now, excludeVerbs) =>
      rows(
        `SELECT ${RECORD_COLUMNS} FROM tray_records
         WHERE user_id = $1 AND in_inbox AND expires_at > $2 AND verb <> ALL($3::text[])
         ORDER BY last_update DESC, key DESC OFFSET $4 LIMIT $5`,
        [userId, now, excludeVerbs, Math.max(0, (page - 1) * pageSize), pageSize],
      ),

    async markRead(userId, verb: TrayVerb, targetId, now) {
      const clock = markClock(now);
      const key = encodeRecordKey({ verb, targetId, userId });
      // Only the read and seen flags and changedAt: a worker writing the same record at once keeps
      // its actors.
      const changed = await marked(
        `UPDATE tray_records SET has_read = true, is_seen = true, changed_at = GREATEST(changed_at + 1, $3)
         FROM (${MARKED_FROM} AND key = $2 AND expires_at > $3 AND NOT (has_read AND is_seen) FOR UPDATE) AS b
         WHERE user_id = $1 AND key = b.marked
         RETURNING ${RECORD_COLUMNS}, b.changed_before`,
        [userId, key, now],
      );
      if (changed.length > 0)
        return { found: true, changed: await stampedWhenLate(pool, changed, now, clock) };
      const exists = await pool.query(
        'SELECT 1 FROM tray_records WHERE user_id = $1 AND key = $2 AND expires_at > $3',
        [userId, key, now],
      );
      return { found: (exists.rowCount ?? 0) > 0, changed: [] };
    },

    // The rows are locked in key order, the order every writer of several records takes them in,
    // so a fan-out writing this user's records at once waits instead of deadlocking; an abort
    // still possible (a writer of another order) runs the statement again here.
    // The records unread as the call found it: not activity delivered while it waited (markedAsRead).
    // Stamped anew when it waited (stampedWhenLate).
    async markAllRead(userId, now) {
      const clock = markClock(now);
      const changed = await withRetry(() =>
        marked(
          `${unread.read} UPDATE tray_records SET has_read = true, is_seen = true,
             changed_at = GREATEST(changed_at + 1, $2)
           FROM (${unread.from}) AS b
           WHERE user_id = $1 AND key = b.marked AND NOT has_read AND expires_at > $2
           RETURNING ${RECORD_COLUMNS}, b.changed_before`,
          [userId, now],
        ),
      );
      return stampedWhenLate(pool, changed, now, clock);
    },

    // No group locks: a grouped upsert never re-creates a record deleted here after its snapshot
    // (it only updates the records it read, upsert-group-records.ts). Its update of one record and
    // insert over another of the user's, expired, may take two rows crosswise to this statement's
    // key order: an abort for that deadlock runs it again.
    async deleteAll(userId) {
      const result = await withRetry(() =>
        pool.query('DELETE FROM tray_records WHERE user_id = $1', [userId]),
      );
      return result.rowCount ?? 0;
    },

    // With the inbox state: a reconnecting stream must tell an archived or snoozed record from one
    // back in the inbox.
    // A page continues after (changed_at, key): key is COLLATE "C", the order of the row comparison.
    changedSince: async (userId, since, now, page) =>
      (
        await pool.query<InboxRow>(
          `SELECT ${INBOX_COLUMNS} FROM tray_records
           WHERE user_id = $1 AND changed_at > $2 AND expires_at > $3
           ${page?.after ? 'AND (changed_at, key) > ($5, $6)' : ''}
           ORDER BY changed_at, key
           ${page ? 'LIMIT $4' : ''}`,
          [
            userId,
            since,
            now,
            ...(page ? [page.limit] : []),
            ...(page?.after ? [page.after.changedAt, page.after.key] : []),
          ],
        )
      ).rows.map(toInboxRecord),
    byKeys: async (userId, keys, now) =>
      keys.length === 0
        ? []
        : (
            await pool.query<InboxRow>(
              `SELECT ${INBOX_COLUMNS} FROM tray_records
               WHERE user_id = $1 AND key = ANY($2::text[]) AND expires_at > $3`,
              [userId, [...new Set(keys)], now],
            )
          ).rows.map(toInboxRecord),
  };
}
