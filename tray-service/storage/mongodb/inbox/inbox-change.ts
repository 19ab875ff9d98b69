import { archive, unarchive } from '../../../domain/archive-mark.ts';
import type { InboxChange } from '../../../domain/inbox-state.ts';
import { markSeen } from '../../../domain/seen-mark.ts';
import { snooze, unsnooze } from '../../../domain/snooze-mark.ts';
import type { InboxMark } from '../../port.ts';
import { recordBox } from '../records/record-box.ts';
import type { TrayRecordDoc } from '../records/tray-records-collection.ts';
import { withInboxState } from '../records/with-inbox-state.ts';

/**
 * What an inbox mark made at `now` changes of one record, by the domain's rules (seen-mark.ts,
 * archive-mark.ts, snooze-mark.ts); undefined when nothing. Pure.
 */
export function inboxChange(mark: InboxMark, stored: TrayRecordDoc, now: number): InboxChange | undefined {
  const record = withInboxState(stored);
  switch (mark.kind) {
    case 'seen':
      return markSeen(record);
    case 'archive':
      return mark.readOnly && !record.hasRead ? undefined : archive(record, now);
    case 'unarchive':
      return unarchive(record);
    case 'snooze':
      return snooze(record, mark.until);
    case 'unsnooze':
      return unsnooze(record);
  }
}

/**
 * The record's next state under a change: the change, its box kept with it, the next version
 * (casUpdateRecords writes it filtered on the one read). 'unchanged' without a change. Pure.
 */
export function withInboxChange(
  record: TrayRecordDoc,
  change: InboxChange | undefined,
): TrayRecordDoc | 'unchanged' {
  if (!change) return 'unchanged';
  const next = { ...withInboxState(record), ...change };
  return { ...next, box: recordBox(next), version: record.version + 1 };
}
