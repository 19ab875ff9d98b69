import { BlockListFullError } from '../domain/block-list-full-error.ts';
import { MAX_BLOCKED_USERS } from '../domain/block-list-limit.ts';
import { DeletedUserError } from '../domain/deleted-user-error.ts';
import type { BlockEntry, BlockListPage, BlockListPort, DeletedUsersPort } from '../storage/port.ts';
import { unlessDeleted } from './unless-deleted.ts';

/** 4.2 rule 2. */
export const BLOCK_PAGE_SIZE = 20;

/** The owner's side of an entry (docs/contract.md#block-list-legacy-beta-deprecated): network and owner, so one store can serve several networks. */
export const netidUid = (networkId: string, ownerUserId: string) => `${networkId}_${ownerUserId}`;

export interface BlockList {
  /**
   * 'self' when a user tries to block themselves (nothing is stored); a deleted user's block, of
   * themselves too, is refused (DeletedUserError) and leaves nothing stored, and so is a block of a
   * new user past MAX_BLOCKED_USERS (BlockListFullError). Blocking someone already blocked always
   * succeeds.
   */
  block(userId: string, blockUserId: string): Promise<'blocked' | 'self'>;
  /** Unblocking someone not blocked succeeds too: the end state is what was asked for. */
  unblock(userId: string, blockUserId: string): Promise<void>;
  /** 'foreign' when the token is another owner's (as invalid as a malformed one, and says nothing about that list). */
  page(userId: string, token: BlockEntry | undefined): Promise<BlockListPage | 'foreign'>;
  /** Each of `userIds` with whether the user blocked it. */
  check(userId: string, userIds: readonly string[]): Promise<Map<string, boolean>>;
  /** Removes the user's whole list (a deleted user's); others' blocks of them stay. */
  forget(userId: string): Promise<void>;
}

/** The legacy block list of one network (docs/contract.md#block-list-legacy-beta-deprecated). */
export function createBlockList(
  entries: BlockListPort,
  users: DeletedUsersPort,
  networkId: string,
): BlockList {
  const owner = (userId: string) => netidUid(networkId, userId);
  return {
    async block(userId, blockUserId) {
      if (blockUserId === userId) {
        // Nothing to store, but a deleted user's call is still refused as theirs all are (410).
        if (await users.isDeleted(userId)) throw new DeletedUserError();
        return 'self';
      }
      // The adapter counts and writes in one step: a count taken here, before the write, would let
      // blocks of one user sent at once all pass it and go past the limit.
      const stored = await unlessDeleted(
        users,
        userId,
        () => entries.block(owner(userId), blockUserId, MAX_BLOCKED_USERS),
        () => entries.forget(owner(userId)),
      );
      if (stored === 'full') throw new BlockListFullError();
      return 'blocked';
    },
    unblock: (userId, blockUserId) => entries.unblock(owner(userId), blockUserId),
    async page(userId, token) {
      const mine = owner(userId);
      if (token && token.netid_uid !== mine) return 'foreign';
      return entries.page(mine, token?.blocked_userId, BLOCK_PAGE_SIZE);
    },
    async check(userId, userIds) {
      const blocked = await entries.blockedAmong(owner(userId), userIds);
      return new Map(userIds.map((id) => [id, blocked.has(id)]));
    },
    forget: (userId) => entries.forget(owner(userId)),
  };
}
