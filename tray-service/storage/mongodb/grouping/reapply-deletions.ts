import type { Db } from 'mongodb';
import { forgetDeletedUsers } from './apply-profile-changes.ts';
import { deletedAmong } from './deleted-users.ts';
import type { GroupingOptions } from './write-deliveries.ts';

/**
 * After a write: a user it wrote as alive (a record of theirs, their name as it was in a record or
 * a kept action) whose deletion was stored while it ran may have been missed by that deletion,
 * which rewrote what it read before this write landed (docs/tray-rules.md#deleted-users). A
 * deletion stores the profile before it rewrites anything, so reading the profiles after the write
 * finds it whenever the deletion could have missed the write; the rewrite then runs again for
 * them (forgetDeletedUsers, idempotent). One look-up (deletedAmong) when no one was deleted, the
 * common case.
 */
export async function reapplyDeletions(
  db: Db,
  alive: ReadonlySet<string>,
  options: Pick<GroupingOptions, 'owner' | 'now' | 'onWritten'>,
): Promise<void> {
  if (alive.size === 0) return;
  const deleted = await deletedAmong(db, alive);
  if (deleted.size === 0) return;
  await forgetDeletedUsers(db, [...deleted], {
    owner: options.owner,
    ...(options.now ? { now: options.now } : {}),
    ...(options.onWritten ? { onWritten: options.onWritten } : {}),
  });
}
