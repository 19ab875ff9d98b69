import type { MuteTarget } from '../domain/mute-changes.ts';
import type { TrayStorage } from '../storage/port.ts';
import { MUTE_SPANS_KEPT_DAYS } from './mute-spans-kept.ts';
import { requireInbox } from './require-inbox.ts';

/** DELETE v3/mutes: ends the target's mute in force now; false when none was. */
export async function removeMute(
  storage: Pick<TrayStorage, 'inbox' | 'engine'>,
  request: { userId: string; target: MuteTarget; now: number },
): Promise<boolean> {
  return requireInbox(storage).removeMute(request.userId, request.target, request.now, MUTE_SPANS_KEPT_DAYS);
}
