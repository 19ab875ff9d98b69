import type { TrayStorage } from '../storage/port.ts';
import { inboxCounts, type InboxCounts } from './inbox-counts.ts';

/**
 * The counts of GET v3 (inboxCounts) for many users at once: one round trip when the storage
 * counts many users in one statement, else user by user. The live streams recount every user a
 * burst of changes touched (a snooze wake-up touches hundreds).
 */
export async function inboxCountsOf(
  storage: Pick<TrayStorage, 'records' | 'inbox'>,
  userIds: readonly string[],
  now: number,
): Promise<Map<string, InboxCounts>> {
  if (storage.inbox?.countInboxes) {
    const pairs = await storage.inbox.countInboxes(userIds, now);
    return new Map(
      [...pairs].map(([userId, { unread, unseen }]) => [
        userId,
        { totalUnreadCount: unread, totalUnseenCount: unseen },
      ]),
    );
  }
  return new Map(
    await Promise.all(
      userIds.map(async (userId) => [userId, await inboxCounts(storage, userId, now)] as const),
    ),
  );
}
