import type { TrayStorage } from '../storage/port.ts';

/**
 * The user's unread count (docs/contract.md#what-unread-compares): records not marked read whose
 * unreadAt is after the user's last-read time. The one place the two levels of "read" are
 * composed; the tray API and the live streams both ask here.
 */
export async function unreadCount(
  storage: Pick<TrayStorage, 'records' | 'lastRead'>,
  userId: string,
  now: number,
): Promise<number> {
  const lastReadAt = await storage.lastRead.latest(userId);
  return storage.records.countUnread(userId, lastReadAt, now);
}
