import type { TrayStorage } from '../storage/port.ts';
import type { TrayChanges } from './tray-changes.ts';

/**
 * v2/last-read: records `now` as the user's last-read time (it never moves backwards), so records
 * made unread before it no longer count, and those records become seen too (docs/tray-rules.md#inbox);
 * the user's streams recount.
 */
export async function markLastRead(
  storage: Pick<TrayStorage, 'lastRead' | 'inbox'>,
  changes: Pick<TrayChanges, 'lastRead'> | undefined,
  userId: string,
  now: number,
): Promise<void> {
  await storage.lastRead.record(userId, now);
  await storage.inbox?.seeThrough(userId, now);
  await changes?.lastRead(userId);
}
