import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';

/** The inbox state a record of before the inbox gets: in the inbox, seen when it was read. Pure. */
export function preInboxState(
  hasRead: boolean,
): Pick<TrayRecordDoc, 'isSeen' | 'archivedAt' | 'snoozedUntil' | 'box'> {
  return { isSeen: hasRead, archivedAt: null, snoozedUntil: null, box: 'inbox' };
}

/**
 * A stored record with its inbox state. One without (written by a worker of before the inbox
 * during a rolling upgrade, after this version's start-up pass gave the older records theirs:
 * migrate-inbox-state.ts) reads as that pass would have left it, and a mark of it writes that
 * state with the mark. Pure.
 */
export function withInboxState(doc: TrayRecordDoc): TrayRecordDoc {
  const stored: Partial<Pick<TrayRecordDoc, 'box'>> = doc;
  return stored.box === undefined ? { ...doc, ...preInboxState(doc.hasRead) } : doc;
}
