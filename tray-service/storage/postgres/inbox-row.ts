import type { InboxRecord } from '../../domain/inbox-record.ts';
import { RECORD_COLUMNS, toTrayRecord, type RecordRow } from './record-row.ts';

/** The columns of tray_records an inbox record is made of: the reader's record and its inbox state. */
export const INBOX_COLUMNS = `${RECORD_COLUMNS}, is_seen, archived_at, snoozed_until`;

/** The same columns of the table aliased `t`, for an UPDATE ... FROM whose other side has some too. */
export const INBOX_COLUMNS_OF_T = INBOX_COLUMNS.split(',')
  .map((column) => `t.${column.trim()}`)
  .join(', ');

export interface InboxRow extends RecordRow {
  is_seen: boolean;
  /** bigint: a string, or null. */
  archived_at: string | null;
  snoozed_until: string | null;
}

export function toInboxRecord(row: InboxRow): InboxRecord {
  // Onto the record toTrayRecord has just made, rather than a spread into a copy of it: one
  // record object per row, not two.
  return Object.assign(toTrayRecord(row), {
    isSeen: row.is_seen,
    archivedAt: row.archived_at === null ? null : Number(row.archived_at),
    snoozedUntil: row.snoozed_until === null ? null : Number(row.snoozed_until),
  });
}
