import type { TrayStorage } from '../storage/port.ts';
import { announcePartial } from './announce-partial.ts';
import type { TrayChanges } from './tray-changes.ts';

/** v3/mark-all-as-read: every unread record of the user marked read; returns how many changed. */
export async function markAll(
  storage: Pick<TrayStorage, 'records'>,
  changes: Pick<TrayChanges, 'markedRead'> | undefined,
  userId: string,
  now: number,
): Promise<number> {
  const announce = async (marked: Parameters<TrayChanges['markedRead']>[0]) => {
    if (marked.length > 0) await changes?.markedRead(marked);
  };
  const changed = await announcePartial(() => storage.records.markAllRead(userId, now), announce);
  await announce(changed);
  return changed.length;
}
