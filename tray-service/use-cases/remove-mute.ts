import type { MuteTarget } from '../domain/mute-changes.ts';
import type { TrayStorage } from '../storage/port.ts';
import { requireInbox } from './require-inbox.ts';

/**
 * DELETE v3/mutes: ends the target's mute in force now; false when none was. The ended span is
 * kept `retentionDays` (the records', TRAY_RETENTION_DAYS), as putMute says why.
 */
export async function removeMute(
  storage: Pick<TrayStorage, 'inbox' | 'engine'>,
  request: { userId: string; target: MuteTarget; now: number; retentionDays: number },
): Promise<boolean> {
  const { userId, target, now, retentionDays } = request;
  return requireInbox(storage).removeMute(userId, target, now, retentionDays);
}
