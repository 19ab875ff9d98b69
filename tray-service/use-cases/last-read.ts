import type { TrayStorage } from '../storage/port.ts';
import type { TrayChanges } from './tray-changes.ts';
import { unlessDeleted } from './unless-deleted.ts';

/**
 * v2/last-read: records `now` as the user's last-read time (it never moves backwards), so records
 * made unread before it no longer count, and those records become seen too (docs/tray-rules.md#inbox);
 * the user's streams recount. A deleted user's is refused (DeletedUserError) and stores nothing.
 */
export async function markLastRead(
  storage: Pick<TrayStorage, 'lastRead' | 'inbox' | 'deletedUsers'>,
  changes: Pick<TrayChanges, 'lastRead'> | undefined,
  userId: string,
  now: number,
): Promise<void> {
  await unlessDeleted(
    storage.deletedUsers,
    userId,
    () => storage.lastRead.record(userId, now),
    () => storage.deletedUsers.forgetKept([userId]),
  );
  // The time is stored, and with it the unread count changed: the streams recount even when
  // marking the records seen fails (a retry marks them).
  try {
    await storage.inbox?.seeThrough(userId, now);
  } finally {
    await changes?.lastRead(userId);
  }
}
