import type { CallOptions } from '../call-options.ts';
import type {
  BlockEntry,
  BlockListBody,
  BlockListPage,
  BlockMemberBody,
  BlockStatusBody,
  CheckListBody,
  UnblockMemberBody,
} from '../generated/tray-api-types.ts';
import type { Send } from '../send.ts';
import { TrayApiError } from '../tray-api-error.ts';
import { eachUntilAborted } from '../request/each-until-aborted.ts';

/** The legacy block list (deprecated by the platform, served while it lasts). */
export interface BlockMethods {
  /** Blocks a user (idempotent). */
  block(userId: BlockMemberBody['blockUserId'], options?: CallOptions): Promise<void>;
  /** Unblocks a user (also when not blocked). */
  unblock(userId: UnblockMemberBody['blockUserId'], options?: CallOptions): Promise<void>;
  /** Every user the caller has blocked, by user id, fetching pages of 20 as the loop asks. */
  blocked(options?: CallOptions): AsyncGenerator<BlockEntry, void, undefined>;
  /** One page; pass the previous page's `paginationToken` (null on the last page). */
  blockedPage(paginationToken?: BlockEntry | null, options?: CallOptions): Promise<BlockListPage>;
  /** For 1 to 20 user ids: whether the caller has blocked each. */
  checkBlocked(userIds: readonly string[], options?: CallOptions): Promise<CheckListBody>;
}

export function blockMethods(send: Send): BlockMethods {
  const member = (
    method: 'POST' | 'DELETE',
    blockUserId: BlockMemberBody['blockUserId'],
    options: CallOptions,
  ) =>
    send<BlockStatusBody>({
      method,
      path: '/block/members',
      body: { blockUserId } satisfies BlockMemberBody,
      signal: options.signal,
    });
  const blockedPage = (paginationToken?: BlockEntry | null, options: CallOptions = {}) =>
    send<BlockListPage>({
      method: 'POST',
      path: '/block',
      body: (paginationToken ? { paginationToken } : {}) satisfies BlockListBody,
      signal: options.signal,
    });
  return {
    async block(userId, options = {}) {
      await member('POST', userId, options);
    },
    async unblock(userId, options = {}) {
      await member('DELETE', userId, options);
    },
    async *blocked(options = {}) {
      let token: BlockEntry | null = null;
      // Every token asked with: one given again (a proxy's cached page, a faulty service going
      // round a cycle) would fetch the same pages for ever. Checked before the page's entries are
      // handed out a second time.
      const asked = new Set<string>();
      do {
        const page: BlockListPage = await blockedPage(token, options);
        const next: BlockEntry | null = page.results.length > 0 ? page.paginationToken : null;
        if (token !== null) asked.add(token.blocked_userId);
        if (next !== null && asked.has(next.blocked_userId))
          throw new TrayApiError(
            200,
            0,
            `blocked: the page after ${token?.blocked_userId ?? 'the first'} gave the token ${next.blocked_userId} it had given before`,
          );
        yield* eachUntilAborted(page.results, options.signal);
        token = next;
      } while (token);
    },
    blockedPage,
    checkBlocked(userIds, options = {}) {
      return send<CheckListBody>({
        method: 'GET',
        path: '/block/members',
        query: { checkList: userIds },
        signal: options.signal,
      });
    },
  };
}
