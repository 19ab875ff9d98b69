import type { ComputeRecord } from '../compare-and-set/cas-update-records.ts';
import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';

/**
 * `compute` for a mark of all over the records `found` (read from the inbox a batch before they are
 * written): a record a delivery made unread again after the read (its `unreadAt` moved; the
 * compare-and-set reads it again) is left alone. It is activity that landed while the mark ran, and
 * marking it seen, read or archived would hide it before it was ever shown. A mark of all on a
 * large inbox takes seconds here, a batch at a time; PostgreSQL's one statement has no such window.
 * Compared with what the mark read, not with the call's time: a worker's clock ahead of the API's
 * stamps activity delivered before the call after it.
 */
export function leaveMadeUnread(found: readonly TrayRecordDoc[], compute: ComputeRecord): ComputeRecord {
  const readAt = new Map(found.map((record) => [record._id, record.unreadAt]));
  return (key, current) => {
    const unreadAt = readAt.get(key);
    if (current && unreadAt !== undefined && current.unreadAt !== unreadAt) return 'unchanged';
    return compute(key, current);
  };
}
