import type { ModelRecord, ReferenceTray } from './reference-tray.ts';
import type { TrayRecord, TrayVerb } from '../../../tray-service/domain/tray-record.ts';
import type { InboxRecord } from '../../../tray-service/domain/inbox-record.ts';
import { inView, type InboxView } from '../../../tray-service/domain/inbox-view.ts';
import { byteOrder } from './byte-order.ts';

/**
 * What readers get from the reference tray (docs/tray-api.md, docs/contract.md#tray): the same
 * pages, counts and changes the storage port's readers return, computed by filtering and sorting
 * the model's records. Pure.
 */

/** A record as the port's readers return it: the model's own bookkeeping and the inbox state left out. */
export function readerView(record: ModelRecord): TrayRecord {
  const {
    isSeen: _isSeen,
    archivedAt: _archivedAt,
    snoozedUntil: _snoozedUntil,
    ...view
  } = inboxView(record);
  return view;
}

/** A record as the inbox's views return it: with its inbox state, the model's bookkeeping left out. */
export function inboxView(record: ModelRecord): InboxRecord {
  const { countFrom: _countFrom, lastActionAt: _lastActionAt, updateFloor: _floor, ...view } = record;
  return view;
}

/** Newest first: lastUpdate descending, then the key descending (byteOrder). */
export function newestFirst(
  a: Pick<TrayRecord, 'lastUpdate' | 'key'>,
  b: Pick<TrayRecord, 'lastUpdate' | 'key'>,
): number {
  return b.lastUpdate - a.lastUpdate || byteOrder(b.key, a.key);
}

/** The user's unexpired records in `view` (every record by default), newest first, without `excludeVerbs`. */
export function liveRecords(
  tray: ReferenceTray,
  userId: string,
  now: number,
  excludeVerbs: readonly TrayVerb[] = [],
  view: InboxView = 'all',
): TrayRecord[] {
  return liveInboxRecords(tray, userId, now, view, excludeVerbs).map(withoutInboxState);
}

/** liveRecords with their inbox state. */
export function liveInboxRecords(
  tray: ReferenceTray,
  userId: string,
  now: number,
  view: InboxView,
  excludeVerbs: readonly TrayVerb[] = [],
): InboxRecord[] {
  return tray
    .storedRecords(userId)
    .filter((record) => tray.live(record, now) && !excludeVerbs.includes(record.verb) && inView(record, view))
    .map(inboxView)
    .sort(newestFirst);
}

/**
 * v3 (`startAfter`) page of a view: records with lastUpdate below `startAfter` (all when undefined
 * or 1, none when 0 or below), the first `pageSize` of them and every further one sharing the last
 * one's lastUpdate; `nextPage` is that lastUpdate when older records follow, else 0.
 */
export function referenceViewPage(
  tray: ReferenceTray,
  userId: string,
  view: InboxView,
  startAfter: number | undefined,
  pageSize: number,
  now: number,
): { records: InboxRecord[]; nextPage: number } {
  if (startAfter !== undefined && startAfter <= 0) return { records: [], nextPage: 0 };
  const all = liveInboxRecords(tray, userId, now, view).filter(
    (record) => startAfter === undefined || startAfter === 1 || record.lastUpdate < startAfter,
  );
  if (all.length <= pageSize) return { records: all, nextPage: 0 };
  const boundary = (all[pageSize - 1] as TrayRecord).lastUpdate;
  const records = all.filter((record, index) => index < pageSize || record.lastUpdate === boundary);
  return { records, nextPage: records.length < all.length ? boundary : 0 };
}

/** The platform's v3 page: the inbox view, records as the platform shows them. */
export function referencePageAfter(
  tray: ReferenceTray,
  userId: string,
  startAfter: number | undefined,
  pageSize: number,
  now: number,
): { records: TrayRecord[]; nextPage: number } {
  const page = referenceViewPage(tray, userId, 'inbox', startAfter, pageSize, now);
  return { records: page.records.map(withoutInboxState), nextPage: page.nextPage };
}

function withoutInboxState(record: InboxRecord): TrayRecord {
  const { isSeen: _isSeen, archivedAt: _archivedAt, snoozedUntil: _snoozedUntil, ...view } = record;
  return view;
}

/** Every v3 page of a view, from the first page until `nextPage` is 0. */
export function referenceViewHistory(
  tray: ReferenceTray,
  userId: string,
  view: InboxView,
  pageSize: number,
  now: number,
): InboxRecord[][] {
  const pages: InboxRecord[][] = [];
  let startAfter: number | undefined;
  for (;;) {
    const page = referenceViewPage(tray, userId, view, startAfter, pageSize, now);
    pages.push(page.records);
    if (page.nextPage === 0) return pages;
    startAfter = page.nextPage;
  }
}

/** Every v3 page of the inbox, as the platform shows records. */
export function referenceHistory(
  tray: ReferenceTray,
  userId: string,
  pageSize: number,
  now: number,
): TrayRecord[][] {
  return referenceViewHistory(tray, userId, 'inbox', pageSize, now).map((page) =>
    page.map(withoutInboxState),
  );
}

/** v2: page `page` (1-based) of the inbox in the same order, without `excludeVerbs`. */
export function referencePageNumber(
  tray: ReferenceTray,
  userId: string,
  page: number,
  pageSize: number,
  now: number,
  excludeVerbs: readonly TrayVerb[],
): TrayRecord[] {
  return liveRecords(tray, userId, now, excludeVerbs, 'inbox').slice((page - 1) * pageSize, page * pageSize);
}

/** Unread: in the inbox, unexpired, not marked read, and made unread after the last-read time. */
export function referenceCountUnread(
  tray: ReferenceTray,
  userId: string,
  lastReadAt: number,
  now: number,
): number {
  return liveRecords(tray, userId, now, [], 'inbox').filter(
    (record) => !record.hasRead && record.unreadAt > lastReadAt,
  ).length;
}

/**
 * Unseen: in the inbox, unexpired, not seen, and made unread after the last-read time (which says
 * the user has seen all made unread until then, as it says they have read it: a record written
 * after the last-read with an unread time before it counts neither way).
 */
export function referenceCountUnseen(tray: ReferenceTray, userId: string, now: number): number {
  const lastReadAt = tray.lastRead(userId);
  return liveInboxRecords(tray, userId, now, 'inbox').filter(
    (record) => !record.isSeen && record.unreadAt > lastReadAt,
  ).length;
}

/** Unexpired records whose changedAt is after `since`, oldest change first (then by key), with their inbox state. */
export function referenceChangedSince(
  tray: ReferenceTray,
  userId: string,
  since: number,
  now: number,
): InboxRecord[] {
  return liveInboxRecords(tray, userId, now, 'all')
    .filter((record) => record.changedAt > since)
    .sort((a, b) => a.changedAt - b.changedAt || byteOrder(a.key, b.key));
}
