import { InvalidUntilError } from '../domain/invalid-until-error.ts';
import { muteUntilProblem, type MuteTarget } from '../domain/mute-changes.ts';
import {
  MAX_MUTE_SPANS_PER_TARGET,
  MAX_MUTE_SPANS_PER_USER,
  MAX_MUTES_IN_FORCE,
  type Mute,
} from '../domain/mute.ts';
import { TooManyMuteSpansError } from '../domain/too-many-mute-spans-error.ts';
import { TooManyMutesError } from '../domain/too-many-mutes-error.ts';
import type { TrayStorage } from '../storage/port.ts';
import { requireInbox } from './require-inbox.ts';
import { unlessDeleted } from './unless-deleted.ts';

/**
 * PUT v3/mutes: mutes the target from `now` (or changes the `until` of its mute in force). An
 * `until` not later than `now` is refused (InvalidUntilError), and so is a new mute beyond
 * MAX_MUTES_IN_FORCE (TooManyMutesError), one of a target muted anew MAX_MUTE_SPANS_PER_TARGET
 * times within the retention or of a user who started MAX_MUTE_SPANS_PER_USER mutes within it
 * (TooManyMuteSpansError), and a deleted user's (DeletedUserError);
 * each changes nothing. A second PUT of a target in force is always allowed, since it adds no mute.
 *
 * `retentionDays` is the records' (TRAY_RETENTION_DAYS): an ended span is kept as long after its
 * end, so a late delivery dated inside it stays held back while a record could still count it
 * (docs/tray-rules.md#inbox).
 */
export async function putMute(
  storage: Pick<TrayStorage, 'inbox' | 'engine' | 'deletedUsers'>,
  request: { userId: string; target: MuteTarget; until: number | null; now: number; retentionDays: number },
): Promise<Mute> {
  const { userId, target, until, now, retentionDays } = request;
  const problem = muteUntilProblem(until, now);
  if (problem !== undefined) throw new InvalidUntilError(problem);
  // The adapter counts and writes in one step: a count taken here, before the write, let PUTs of
  // one user sent at once all pass it and go past the limit.
  const inbox = requireInbox(storage);
  const mute = await unlessDeleted(
    storage.deletedUsers,
    userId,
    () =>
      inbox.putMute(
        userId,
        target,
        until,
        now,
        retentionDays,
        MAX_MUTES_IN_FORCE,
        MAX_MUTE_SPANS_PER_TARGET,
        MAX_MUTE_SPANS_PER_USER,
      ),
    () => storage.deletedUsers.forgetKept([userId]),
  );
  if (mute === 'too many') throw new TooManyMutesError();
  if (mute === 'too many spans') throw new TooManyMuteSpansError(retentionDays);
  if (mute === 'too many user spans') throw new TooManyMuteSpansError(retentionDays, 'user');
  return mute;
}
