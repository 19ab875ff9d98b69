import { archive, unarchive } from '../../../domain/archive-mark.ts';
import type { InboxChange } from '../../../domain/inbox-state.ts';
import { markSeen } from '../../../domain/seen-mark.ts';
import { snooze, unsnooze } from '../../../domain/snooze-mark.ts';
import type { InboxMark } from '../../port.ts';
import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';
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
