import type { TrayStorage } from '../storage/port.ts';
import { inboxCounts, type InboxCounts } from './inbox-counts.ts';

/** A user's counts, and when the first record they counted expires, when the storage says. */
export interface CountedInbox {
  counts: InboxCounts;
  /** The counts change then without any write (InboxCountPair.nextExpiry). */
  nextExpiry?: number;
}

/**
 * The counts of GET v3 (inboxCounts) for many users at once: one round trip when the storage
 * counts many users in one statement, else user by user (and without the next expiry). The live
 * streams recount every user a burst of changes touched (a snooze wake-up touches hundreds).
 */
export async function inboxCountsOf(
  storage: Pick<TrayStorage, 'records' | 'inbox'>,
  userIds: readonly string[],
  now: number,
): Promise<Map<string, CountedInbox>> {
  if (storage.inbox) {
    const pairs = await storage.inbox.countInboxes(userIds, now);
    return new Map(
      [...pairs].map(([userId, { unread, unseen, nextExpiry }]) => [
        userId,
        {
          counts: { totalUnreadCount: unread, totalUnseenCount: unseen },
          ...(nextExpiry === undefined ? {} : { nextExpiry }),
        },
      ]),
    );
  }
  return new Map(
    await Promise.all(
      userIds.map(async (userId) => [userId, { counts: await inboxCounts(storage, userId, now) }] as const),
    ),
  );
}
