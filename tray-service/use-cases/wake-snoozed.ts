import type { InboxRecord } from '../domain/inbox-record.ts';
import type { TrayStorage } from '../storage/port.ts';
import type { TrayChanges } from './tray-changes.ts';
import { writeAndAnnounce } from './write-and-announce.ts';

/**
 * The snooze wake-up (docs/tray-rules.md#inbox): brings back up to `limit` records whose snooze has
 * ended by `now`, unread and unseen, and announces each to its user's streams as a `record`. Each
 * record is claimed by one process only, however many run this at once (the storage's claim).
 * Returns how many woke: `limit` means more may be due.
 */
export async function wakeSnoozed(
  storage: Pick<TrayStorage, 'inbox'>,
  changes: Pick<TrayChanges, 'recordsWritten'> | undefined,
  now: number,
  limit: number,
): Promise<number> {
  const { inbox } = storage;
  if (!inbox) return 0;
  // Woken part-way (PartialWriteError): those woken are announced, then the round fails.
  const woken = await writeAndAnnounce<InboxRecord>(
    (tell) => inbox.wakeDue(now, limit, tell),
    async (records) => changes?.recordsWritten(records),
  );
  return woken.length;
}
