import type { ModelRecord, ReferenceTray } from './reference-tray.ts';
import type { TrayRecord, TrayVerb } from '../../../tray-service/domain/tray-record.ts';

/**
 * What readers get from the reference tray (docs/tray-api.md, docs/contract.md#tray): the same
 * pages, counts and changes the storage port's readers return, computed by filtering and sorting
 * the model's records. Pure.
 */

/** A record as the port's readers return it: the model's own bookkeeping (countFrom) left out. */
export function readerView(record: ModelRecord): TrayRecord {
  const { countFrom: _countFrom, ...view } = record;
  return view;
}

/** Newest first: lastUpdate descending, then the key descending (code-unit order). */
export function newestFirst(
  a: Pick<TrayRecord, 'lastUpdate' | 'key'>,
  b: Pick<TrayRecord, 'lastUpdate' | 'key'>,
): number {
  return b.lastUpdate - a.lastUpdate || (a.key < b.key ? 1 : a.key > b.key ? -1 : 0);
}

/** The user's unexpired records, newest first, without `excludeVerbs`. */
export function liveRecords(
  tray: ReferenceTray,
  userId: string,
  now: number,
  excludeVerbs: readonly TrayVerb[] = [],
): TrayRecord[] {
  return tray
    .storedRecords(userId)
    .filter((record) => tray.live(record, now) && !excludeVerbs.includes(record.verb))
    .map(readerView)
    .sort(newestFirst);
}

/**
 * v3 (`startAfter`): records with lastUpdate below `startAfter` (all when undefined or 1, none
 * when 0 or below), the first `pageSize` of them and every further one sharing the last one's
 * lastUpdate; `nextPage` is that lastUpdate when older records follow, else 0.
 */
export function referencePageAfter(
  tray: ReferenceTray,
  userId: string,
  startAfter: number | undefined,
  pageSize: number,
  now: number,
): { records: TrayRecord[]; nextPage: number } {
  if (startAfter !== undefined && startAfter <= 0) return { records: [], nextPage: 0 };
  const all = liveRecords(tray, userId, now).filter(
    (record) => startAfter === undefined || startAfter === 1 || record.lastUpdate < startAfter,
  );
  if (all.length <= pageSize) return { records: all, nextPage: 0 };
  const boundary = (all[pageSize - 1] as TrayRecord).lastUpdate;
  const records = all.filter((record, index) => index < pageSize || record.lastUpdate === boundary);
  return { records, nextPage: records.length < all.length ? boundary : 0 };
}

/** Every v3 page of a walk from the first page until `nextPage` is 0. */
export function referenceHistory(
  tray: ReferenceTray,
  userId: string,
  pageSize: number,
  now: number,
): TrayRecord[][] {
  const pages: TrayRecord[][] = [];
  let startAfter: number | undefined;
  for (;;) {
    const page = referencePageAfter(tray, userId, startAfter, pageSize, now);
    pages.push(page.records);
    if (page.nextPage === 0) return pages;
    startAfter = page.nextPage;
  }
}

/** v2: page `page` (1-based) of the same order, without `excludeVerbs`. */
export function referencePageNumber(
  tray: ReferenceTray,
  userId: string,
  page: number,
  pageSize: number,
  now: number,
  excludeVerbs: readonly TrayVerb[],
): TrayRecord[] {
  return liveRecords(tray, userId, now, excludeVerbs).slice((page - 1) * pageSize, page * pageSize);
}

/** Unread: unexpired, not marked read, and made unread after the last-read time. */
export function referenceCountUnread(
  tray: ReferenceTray,
  userId: string,
  lastReadAt: number,
  now: number,
): number {
  return liveRecords(tray, userId, now).filter((record) => !record.hasRead && record.unreadAt > lastReadAt)
    .length;
}

/** Unexpired records whose changedAt is after `since`, oldest change first (then by key). */
export function referenceChangedSince(
  tray: ReferenceTray,
  userId: string,
  since: number,
  now: number,
): TrayRecord[] {
  return liveRecords(tray, userId, now)
    .filter((record) => record.changedAt > since)
    .sort((a, b) => a.changedAt - b.changedAt || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
