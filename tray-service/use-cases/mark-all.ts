import type { MarkedRecord, TrayStorage } from '../storage/port.ts';
import { writeAndAnnounce } from './write-and-announce.ts';
import type { TrayChanges } from './tray-changes.ts';

/** v3/mark-all-as-read: every unread record of the user marked read; returns how many changed. */
export async function markAll(
  storage: Pick<TrayStorage, 'records'>,
  changes: Pick<TrayChanges, 'markedRead'> | undefined,
  userId: string,
  now: number,
): Promise<number> {
  const changed = await writeAndAnnounce<MarkedRecord>(
    (tell) => storage.records.markAllRead(userId, now, tell),
    async (marked) => changes?.markedRead(marked),
  );
  return changed.length;
}
