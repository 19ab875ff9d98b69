import type { Mute } from '../domain/mute.ts';
import type { TrayStorage } from '../storage/port.ts';
import { requireInbox } from './require-inbox.ts';

/** GET v3/mutes: the caller's mutes in force at `now`, oldest first. */
export async function listMutes(
  storage: Pick<TrayStorage, 'inbox' | 'engine'>,
  userId: string,
  now: number,
): Promise<Mute[]> {
  return requireInbox(storage).mutesInForce(userId, now);
}
