import type { TrayStorage } from '../storage/port.ts';

export interface InboxCounts {
  totalUnreadCount: number;
  /** Absent when the storage has no inbox extensions (the platform's answer, unchanged). */
  totalUnseenCount?: number;
}

/**
 * GET v3: the unread and unseen counts of the inbox, one indexed statement each, run together. The
 * unread count is the platform's (it already counts inbox records only); without the inbox
 * extensions the answer is the platform's alone, so clients that know nothing of the inbox keep working.
 */
export async function inboxCounts(
  storage: Pick<TrayStorage, 'records' | 'inbox'>,
  userId: string,
  now: number,
): Promise<InboxCounts> {
  const [totalUnreadCount, totalUnseenCount] = await Promise.all([
    storage.records.countUnread(userId, 'recorded', now),
    storage.inbox?.countUnseen(userId, now),
  ]);
  return totalUnseenCount === undefined ? { totalUnreadCount } : { totalUnreadCount, totalUnseenCount };
}
