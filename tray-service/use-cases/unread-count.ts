import type { TrayStorage } from '../storage/port.ts';

/**
 * The user's unread count (docs/contract.md#what-unread-compares): records not marked read whose
 * unreadAt is after the user's last-read time. The tray API and the live streams both ask here;
 * storage composes the two levels of "read" in one request (the last-read time is read with the
 * count), so the count costs one round trip, not two in a row.
 */
export async function unreadCount(
  storage: Pick<TrayStorage, 'records'>,
  userId: string,
  now: number,
): Promise<number> {
  return storage.records.countUnread(userId, 'recorded', now);
}
