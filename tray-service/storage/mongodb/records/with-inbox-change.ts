import type { InboxChange } from '../../../domain/inbox-state.ts';
import { recordBox } from '../collections/record-box.ts';
import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';
import { withInboxState } from './with-inbox-state.ts';

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
