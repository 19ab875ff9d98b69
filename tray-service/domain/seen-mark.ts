import type { InboxChange, MarkableRecord } from './inbox-state.ts';

/** POST records/seen: the record becomes seen; undefined when it already is. Pure. */
export function markSeen(record: Pick<MarkableRecord, 'isSeen'>): InboxChange | undefined {
  return record.isSeen ? undefined : { isSeen: true };
}

/**
 * v2/read and mark-all-as-read read a record, which also sees it; undefined when both are already
 * set. Pure.
 */
export function markReadAndSeen(record: Pick<MarkableRecord, 'hasRead' | 'isSeen'>): InboxChange | undefined {
  return record.hasRead && record.isSeen ? undefined : { hasRead: true, isSeen: true };
}

/**
 * v2/last-read at `now`: a record it stops counting as unread (not read, changed at or before now)
 * becomes seen. Pure.
 */
export function seenByLastRead(
  record: Pick<MarkableRecord, 'hasRead' | 'isSeen' | 'unreadAt'>,
  now: number,
): InboxChange | undefined {
  return !record.hasRead && !record.isSeen && record.unreadAt <= now ? { isSeen: true } : undefined;
}
