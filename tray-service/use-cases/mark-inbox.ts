import { InvalidUntilError } from '../domain/invalid-until-error.ts';
import { snoozeUntilProblem } from '../domain/snooze-mark.ts';
import type { InboxRecord } from '../domain/inbox-record.ts';
import type { InboxMark, MarkedRecord, TrayStorage } from '../storage/port.ts';
import { writeAndAnnounce } from './write-and-announce.ts';
import { requireInbox } from './require-inbox.ts';
import type { TrayChanges } from './tray-changes.ts';

/**
 * POST v3/records/{seen,archive,unarchive,snooze,unsnooze}: one mark of the caller's records. A
 * snooze's `until` is judged against `now` and the retention first (InvalidUntilError: nothing
 * changes). The
 * storage looks only among the caller's own records, so ids of another user's, unknown or expired
 * records change nothing. Returns how many records changed (`updated`); those are announced to the
 * caller's streams.
 */
export async function markInbox(
  storage: Pick<TrayStorage, 'inbox' | 'engine'>,
  changes: Pick<TrayChanges, 'inboxMarked'> | undefined,
  request: {
    userId: string;
    mark: InboxMark;
    now: number;
    /** TRAY_RETENTION_DAYS: no snooze reaches past it. */
    retentionDays: number;
  },
): Promise<number> {
  const { mark, now } = request;
  const problem =
    mark.kind === 'snooze' ? snoozeUntilProblem(mark.until, now, request.retentionDays) : undefined;
  if (problem !== undefined) throw new InvalidUntilError(problem);
  const inbox = requireInbox(storage);
  // Every id named no record the caller could have (the schema leaves those out): nothing to ask.
  if (mark.ids !== 'all' && mark.ids.length === 0) return 0;
  const changed = await writeAndAnnounce<MarkedRecord<InboxRecord>>(
    (tell) => inbox.mark(request.userId, mark, now, tell),
    async (marked) => changes?.inboxMarked(mark, marked),
  );
  return changed.length;
}
