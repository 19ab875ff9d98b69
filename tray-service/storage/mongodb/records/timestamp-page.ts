/**
 * The v3 history cursor (docs/contract.md#tray: `startAfter`/`nextPage` are integer timestamps).
 * An integer timestamp cannot tell apart records sharing one `lastUpdate`, so a page never splits
 * such a group: it is extended to the group's end and the next page starts strictly below it.
 * Pure: the repository runs the queries, this decides what they mean.
 */

/** `startAfter` absent or 1 (the documented default) is the first page; 0 is past the end. */
export const FIRST_PAGE = 1;
/** `nextPage` of the last page: passing it back yields an empty page, so no client loops forever. */
export const NO_MORE_PAGES = 0;

export interface Timestamped {
  _id: string;
  lastUpdate: number;
}

export type PageCut<T> =
  /** The page is complete; `nextPage` is the boundary to pass as `startAfter` (or NO_MORE_PAGES). */
  | { kind: 'complete'; records: T[]; nextPage: number }
  /** The page ends inside a group of equal `lastUpdate`: fetch the rest of the group below `afterId`. */
  | { kind: 'extend'; records: T[]; boundary: number; afterId: string };

/**
 * Rows to fetch for one page: the page plus as many again, so a group of equal timestamps that
 * straddles the page end is almost always completed by the same query (one round trip), and the
 * row after the group shows whether more pages follow.
 */
export const pageFetchLimit = (pageSize: number) => pageSize * 2 + 1;

/**
 * Cuts a page out of `rows`, fetched in (lastUpdate desc, _id desc) order with
 * `limit = pageFetchLimit(pageSize)`: the first `pageSize` rows, then every following row with the
 * same `lastUpdate` as the last of them.
 */
export function cutPage<T extends Timestamped>(
  rows: readonly T[],
  pageSize: number,
  limit: number,
): PageCut<T> {
  if (rows.length <= pageSize) return { kind: 'complete', records: [...rows], nextPage: NO_MORE_PAGES };
  const boundary = rows[pageSize - 1]?.lastUpdate;
  if (boundary === undefined) throw new Error('cutPage: pageSize must be at least 1');
  let end = pageSize;
  while (end < rows.length && rows[end]?.lastUpdate === boundary) end++;
  const records = rows.slice(0, end);
  if (end < rows.length) return { kind: 'complete', records, nextPage: boundary };
  // Every fetched row after the page shares the boundary: only more rows can tell what follows.
  if (rows.length < limit) return { kind: 'complete', records, nextPage: NO_MORE_PAGES };
  const last = records[records.length - 1] as T;
  return { kind: 'extend', records, boundary, afterId: last._id };
}

/** The `lastUpdate` range a `startAfter` value selects, or `empty` for a walk that has ended. */
export function startAfterRange(startAfter: number | undefined): { $lt: number } | 'all' | 'empty' {
  if (startAfter === undefined || startAfter === FIRST_PAGE) return 'all';
  if (startAfter <= NO_MORE_PAGES) return 'empty';
  return { $lt: startAfter };
}
