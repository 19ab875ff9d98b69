import type { TrayRecord } from '../../domain/tray-record.ts';
import type { MarkedRecord } from '../port.ts';

/**
 * The start of a mark's locking subquery over the user's records (`$1`), to be completed with its
 * condition and `FOR UPDATE` and joined as `b` on `key = b.marked`: it names each record's
 * changedAt before the mark as `b.changed_before`. Locked, the row it reads is the one the UPDATE
 * then changes (a concurrent write that committed first is read as it left the row), so that is
 * the state the mark replaced.
 */
export const MARKED_FROM = `SELECT key AS marked, changed_at AS changed_before FROM tray_records WHERE user_id = $1`;

/**
 * MARKED_FROM for a mark of all the user's records that meet `condition` (the inbox's, say): `read`
 * (the records as the statement's snapshot has them) goes first, as its WITH, and `from` is the
 * locking subquery, complete. A record a concurrent write held is judged again on the state it
 * committed once its lock is taken; one that write made unread again (new activity delivered while
 * the mark waited) is left out, by its unread time against the one the snapshot read: the activity
 * landed after the call, and marking it would hide it before it was ever shown.
 */
export function markedAsRead(condition: string): { read: string; from: string } {
  return {
    read: `WITH found AS MATERIALIZED (
             SELECT key, unread_at FROM tray_records WHERE user_id = $1 AND ${condition})`,
    from: `SELECT t.key AS marked, t.changed_at AS changed_before FROM tray_records t JOIN found USING (key)
           WHERE t.user_id = $1 AND t.unread_at = found.unread_at AND ${condition}
           ORDER BY key FOR UPDATE OF t`,
  };
}

/** The column a mark's RETURNING adds to the record's (bigint: a string). */
export interface ChangedBeforeRow {
  changed_before: string;
}

/** The record as the mark left it, with the changedAt it replaced. */
export function withChangedBefore<R extends TrayRecord>(record: R, row: ChangedBeforeRow): MarkedRecord<R> {
  return Object.assign(record, { changedBefore: Number(row.changed_before) });
}

/**
 * Said of the unread or unseen records of every view, this lets their partial indexes serve the
 * statement (migration 0005: the inbox's, and the unread ones outside it). It is true of every row
 * (in_inbox is NOT NULL), but the planner combines two partial indexes only for an OR whose arms
 * imply theirs; without it, it read the user's whole tray by the primary key (63 ms for a user of
 * 50,000 records, 20 unread, against 0.4 ms).
 */
export const INBOX_OR_AWAY = '(in_inbox OR NOT in_inbox)';
