import type { TrayVerb } from '../domain/tray-record.ts';
import type { TrayStorage } from '../storage/port.ts';
import type { TrayChanges } from './tray-changes.ts';

/**
 * v2/read: marks the user's record of one verb and target read. False when the user has no
 * unexpired record of them; the records it changed are announced to the user's streams.
 */
export async function markRead(
  storage: Pick<TrayStorage, 'records'>,
  changes: Pick<TrayChanges, 'markedRead'> | undefined,
  request: { userId: string; verb: TrayVerb; targetId: string; now: number },
): Promise<boolean> {
  const { found, changed } = await storage.records.markRead(
    request.userId,
    request.verb,
    request.targetId,
    request.now,
  );
  if (changed.length > 0) await changes?.markedRead(changed);
  return found;
}
