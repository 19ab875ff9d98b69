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

/** The column a mark's RETURNING adds to the record's (bigint: a string). */
export interface ChangedBeforeRow {
  changed_before: string;
}

/** The record as the mark left it, with the changedAt it replaced. */
export function withChangedBefore<R extends TrayRecord>(record: R, row: ChangedBeforeRow): MarkedRecord<R> {
  return Object.assign(record, { changedBefore: Number(row.changed_before) });
}
