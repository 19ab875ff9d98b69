import { DeletedUserError } from '../domain/deleted-user-error.ts';
import type { DeletedUsersPort } from '../storage/port.ts';

/**
 * Runs `write`, a write of state the user keeps for themselves (a mute, their last-read time, a
 * block), and refuses it once their deletion is stored (docs/tray-rules.md#deleted-users): a token
 * issued before the deletion still passes until it expires. The profile is read after the write,
 * not before, because a deletion stores the profile before it removes that state
 * (DeletedUsersPort): a deletion not found here removes what the write left itself; one found here
 * may have removed the state before the write, so `undo` removes it and DeletedUserError is thrown.
 */
export async function unlessDeleted<T>(
  users: DeletedUsersPort,
  userId: string,
  write: () => Promise<T>,
  undo: () => Promise<void>,
): Promise<T> {
  const result = await write();
  if (!(await users.isDeleted(userId))) return result;
  await undo();
  throw new DeletedUserError();
}
