import type { InboxMark, TrayStorage } from '../storage/port.ts';
import { requireInbox } from './require-inbox.ts';
import type { TrayChanges } from './tray-changes.ts';

/**
 * POST v3/records/{seen,archive,unarchive,snooze,unsnooze}: one mark of the caller's records. The
 * storage looks only among the caller's own records, so ids of another user's, unknown or expired
 * records change nothing. Returns how many records changed (`updated`); those are announced to the
 * caller's streams.
 */
export async function markInbox(
  storage: Pick<TrayStorage, 'inbox' | 'engine'>,
  changes: Pick<TrayChanges, 'inboxMarked'> | undefined,
  request: { userId: string; mark: InboxMark; now: number },
): Promise<number> {
  const changed = await requireInbox(storage).mark(request.userId, request.mark, request.now);
  if (changed.length > 0) await changes?.inboxMarked(request.mark, changed);
  return changed.length;
}
