import type pg from 'pg';
import type { InboxView } from '../../domain/inbox-view.ts';
import type { InboxMark, InboxPort } from '../port.ts';
import { INBOX_COLUMNS, INBOX_COLUMNS_OF_T, toInboxRecord, type InboxRow } from './inbox-row.ts';
import {
  INBOX_OR_AWAY,
  MARKED_FROM,
  markedAsRead,
  withChangedBefore,
  type ChangedBeforeRow,
} from './marked-row.ts';
import { createPostgresMutes } from './postgres-mutes.ts';
import { stampedWhenLate } from './stamped-when-late.ts';
import { markClock } from '../mark-clock.ts';
import { viewPage } from './view-page.ts';
import { withRetry } from './with-retry.ts';

/** Each view's predicate, the one of its partial index (migrations/0005_inbox.sql). */
const VIEW_CONDITION: Record<InboxView, string> = {
  inbox: 'in_inbox',
  archived: 'archived_at IS NOT NULL',
  snoozed: 'snoozed_until IS NOT NULL',
  all: 'true',
};

/**
 * Each mark as one SET and the condition under which it changes a record (domain/seen-mark.ts,
 * archive-mark.ts, snooze-mark.ts): rows it would not change are not written, so `updated` counts
 * what changed and a repeated mark writes nothing. `$2` is now, `$3` the snooze's end.
 */
function markSql(mark: InboxMark): { set: string; changes: string } {
  switch (mark.kind) {
    case 'seen':
      return { set: 'is_seen = true', changes: 'NOT is_seen' };
    case 'archive':
      return {
        set: 'archived_at = $2, snoozed_until = NULL',
        changes: mark.readOnly ? 'archived_at IS NULL AND has_read' : 'archived_at IS NULL',
      };
    case 'unarchive':
      return { set: 'archived_at = NULL', changes: 'archived_at IS NOT NULL' };
    case 'snooze':
      return {
        set: 'snoozed_until = $3, archived_at = NULL',
        changes: '(snoozed_until IS DISTINCT FROM $3::bigint OR archived_at IS NOT NULL)',
      };
    case 'unsnooze':
      return { set: 'snoozed_until = NULL', changes: 'snoozed_until IS NOT NULL' };
  }
}

/**
 * The inbox side of tray_records (docs/tray-rules.md#inbox). Every statement takes the user id
 * and runs on one of the user's indexes; every mark is one statement over the records it names
 * (or the inbox's), never a loop per record.
 */
export function createPostgresInbox(pool: pg.Pool): InboxPort {
  const rows = async (sql: string, params: unknown[]) =>
    (await pool.query<InboxRow>(sql, params)).rows.map(toInboxRecord);

  return {
    page: (userId, view, startAfter, pageSize, now) =>
      viewPage(
        pool,
        toInboxRecord,
        { columns: INBOX_COLUMNS, condition: VIEW_CONDITION[view] },
        userId,
        startAfter,
        pageSize,
        now,
      ),

    async countUnseen(userId, now) {
      const result = await pool.query<{ n: number }>({
        name: 'tray_count_unseen',
        text: `SELECT count(*)::int AS n FROM tray_records
          WHERE user_id = $1 AND NOT is_seen AND in_inbox AND expires_at > $2
            AND unread_at > COALESCE((SELECT at FROM tray_last_read WHERE user_id = $1), 0)`,
        values: [userId, now],
      });
      return result.rows[0]?.n ?? 0;
    },

    // Each user's two counts are the statements of countUnread and countUnseen, correlated on the
    // user, so each is served by the same index as on its own; one round trip for all the users.
    // The first expiry of what each counted comes from the same index entries (expires_at is in
    // both indexes' INCLUDE): no more rows read. LEAST skips a NULL (a count of none).
    async countInboxes(userIds, now) {
      const result = await pool.query<{
        user_id: string;
        unread: number;
        unseen: number;
        next_expiry: number | null;
      }>({
        name: 'tray_count_inboxes',
        text: `SELECT u.user_id, unread.n AS unread, unseen.n AS unseen,
            LEAST(unread.first_expiry, unseen.first_expiry)::float8 AS next_expiry
          FROM unnest($1::text[]) AS u(user_id)
          CROSS JOIN LATERAL (SELECT count(*)::int AS n, min(r.expires_at) AS first_expiry
            FROM tray_records r
            WHERE r.user_id = u.user_id AND NOT r.has_read AND r.in_inbox AND r.expires_at > $2
              AND r.unread_at > COALESCE((SELECT at FROM tray_last_read l WHERE l.user_id = u.user_id), 0)
          ) AS unread
          CROSS JOIN LATERAL (SELECT count(*)::int AS n, min(r.expires_at) AS first_expiry
            FROM tray_records r
            WHERE r.user_id = u.user_id AND NOT r.is_seen AND r.in_inbox AND r.expires_at > $2
              AND r.unread_at > COALESCE((SELECT at FROM tray_last_read l WHERE l.user_id = u.user_id), 0)
          ) AS unseen`,
        values: [[...new Set(userIds)], now],
      });
      return new Map(
        result.rows.map((row) => [
          row.user_id,
          {
            unread: row.unread,
            unseen: row.unseen,
            ...(row.next_expiry === null ? {} : { nextExpiry: row.next_expiry }),
          },
        ]),
      );
    },

    // Served by the view's partial page index (the `all` view by the records' own).
    async countView(userId, view, now) {
      const result = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM tray_records
         WHERE user_id = $1 AND ${VIEW_CONDITION[view]} AND expires_at > $2`,
        [userId, now],
      );
      return result.rows[0]?.n ?? 0;
    },

    // The rows are locked in key order, the order every writer of several records takes them in
    // (as markAllRead does), so a fan-out writing this user's records at once waits instead of
    // deadlocking; an abort still possible runs the statement again.
    // Stamped anew when it waited (stampedWhenLate).
    async mark(userId, mark, now) {
      const clock = markClock(now);
      const { set, changes } = markSql(mark);
      const values: unknown[] = [userId, now];
      if (mark.kind === 'snooze') values.push(mark.until);
      // Named records by their key (each once), else every record in the inbox as the call found it.
      if (mark.ids !== 'all') values.push([...new Set(mark.ids)]);
      const { read, from } =
        mark.ids === 'all'
          ? markedAsRead(`in_inbox AND ${changes} AND expires_at > $2`)
          : {
              read: '',
              from: `${MARKED_FROM} AND key = ANY($${values.length}::text[]) AND ${changes} AND expires_at > $2
                     ORDER BY key FOR UPDATE`,
            };
      const changed = await withRetry(async () =>
        (
          await pool.query<InboxRow & ChangedBeforeRow>(
            `${read} UPDATE tray_records SET ${set}, changed_at = GREATEST(changed_at + 1, $2)
             FROM (${from}) AS b
             WHERE user_id = $1 AND key = b.marked AND ${changes} AND expires_at > $2
             RETURNING ${INBOX_COLUMNS}, b.changed_before`,
            values,
          )
        ).rows.map((row) => withChangedBefore(toInboxRecord(row), row)),
      );
      return stampedWhenLate(pool, changed, now, clock);
    },

    async seeThrough(userId, now) {
      const result = await withRetry(() =>
        pool.query(
          `UPDATE tray_records SET is_seen = true
           WHERE user_id = $1 AND key IN (
             SELECT key FROM tray_records
             WHERE user_id = $1 AND NOT has_read AND NOT is_seen AND unread_at <= $2 AND expires_at > $2
               AND ${INBOX_OR_AWAY}
             ORDER BY key FOR UPDATE)
           AND NOT has_read AND NOT is_seen AND unread_at <= $2`,
          [userId, now],
        ),
      );
      return result.rowCount ?? 0;
    },

    // Due records by the snooze index, oldest end first; SKIP LOCKED lets two tray processes claim
    // disjoint batches at once, and a record claimed (and woken) by one is no longer due for the other.
    // Expired ones stay as they are until the purge (few: snoozed past the end of their retention).
    // Stamped anew when it waited (a busy pool), as a mark is (stampedWhenLate).
    async wakeDue(now, limit) {
      const clock = markClock(now);
      const woken = await withRetry(() =>
        rows(
          `UPDATE tray_records t SET snoozed_until = NULL, has_read = false, is_seen = false,
             unread_at = t.snoozed_until, changed_at = GREATEST(t.changed_at + 1, $1)
           FROM (SELECT user_id, key FROM tray_records
                 WHERE snoozed_until IS NOT NULL AND snoozed_until <= $1 AND expires_at > $1
                 ORDER BY snoozed_until LIMIT $2 FOR UPDATE SKIP LOCKED) AS due
           WHERE t.user_id = due.user_id AND t.key = due.key
           RETURNING ${INBOX_COLUMNS_OF_T}`,
          [now, limit],
        ),
      );
      return stampedWhenLate(pool, woken, now, clock);
    },

    ...createPostgresMutes(pool),
  };
}
