/**
 * The v3 history cursor (platform document 4.1: `startAfter`/`nextPage` are integer timestamps).
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
 * Cuts the first `pageSize` rows out of `rows`, which hold up to `pageSize + 1` rows in
 * (lastUpdate desc, _id desc) order; the extra row tells whether more follow and whether the
 * page ends inside a group of equal timestamps.
 */
export function cutPage<T extends Timestamped>(rows: readonly T[], pageSize: number): PageCut<T> {
  if (rows.length <= pageSize) return { kind: 'complete', records: [...rows], nextPage: NO_MORE_PAGES };
  const records = rows.slice(0, pageSize);
  const last = records[pageSize - 1];
  const peek = rows[pageSize];
  if (last === undefined || peek === undefined) throw new Error('cutPage: pageSize must be at least 1');
  if (peek.lastUpdate < last.lastUpdate) return { kind: 'complete', records, nextPage: last.lastUpdate };
  return { kind: 'extend', records, boundary: last.lastUpdate, afterId: last._id };
}

/** The `lastUpdate` range a `startAfter` value selects, or `empty` for a walk that has ended. */
export function startAfterRange(startAfter: number | undefined): { $lt: number } | 'all' | 'empty' {
  if (startAfter === undefined || startAfter === FIRST_PAGE) return 'all';
  if (startAfter <= NO_MORE_PAGES) return 'empty';
  return { $lt: startAfter };
}
