import type { TrayStorage } from '../storage/port.ts';
import type { TrayChanges } from './tray-changes.ts';

/** v3/mark-all-as-read: every unread record of the user marked read; returns how many changed. */
export async function markAll(
  storage: Pick<TrayStorage, 'records'>,
  changes: Pick<TrayChanges, 'markedRead'> | undefined,
  userId: string,
  now: number,
): Promise<number> {
  const changed = await storage.records.markAllRead(userId, now);
  if (changed.length > 0) await changes?.markedRead(changed);
  return changed.length;
}
