import { muteInForce, type MuteTarget } from '../domain/mute-changes.ts';
import { MAX_MUTES_IN_FORCE, type Mute } from '../domain/mute.ts';
import { TooManyMutesError } from '../domain/too-many-mutes-error.ts';
import type { TrayStorage } from '../storage/port.ts';
import { MUTE_SPANS_KEPT_DAYS } from './mute-spans-kept.ts';
import { requireInbox } from './require-inbox.ts';

/**
 * PUT v3/mutes: mutes the target from `now` (or changes the `until` of its mute in force). A new
 * mute beyond MAX_MUTES_IN_FORCE is refused (TooManyMutesError) and changes nothing; a second PUT
 * of a target in force is always allowed, since it adds no mute.
 */
export async function putMute(
  storage: Pick<TrayStorage, 'inbox' | 'engine'>,
  request: { userId: string; target: MuteTarget; until: number | null; now: number },
): Promise<Mute> {
  const inbox = requireInbox(storage);
  const { userId, target, until, now } = request;
  const inForce = await inbox.mutesInForce(userId, now);
  if (inForce.length >= MAX_MUTES_IN_FORCE && !muteInForce(inForce, target, now))
    throw new TooManyMutesError();
  return inbox.putMute(userId, target, until, now, MUTE_SPANS_KEPT_DAYS);
}
