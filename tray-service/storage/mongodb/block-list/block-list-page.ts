import type { BlockEntry, BlockListPage } from '../../port.ts';

/**
 * Rows to fetch for one block-list page: one more than the page, because only a row past the
 * page shows that another page follows (the last page then carries no cursor, never an empty
 * page after it).
 */
export const blockFetchLimit = (pageSize: number) => pageSize + 1;

/**
 * Cuts a block-list page out of `rows`, fetched in blocked_userId order after the cursor with
 * `limit = blockFetchLimit(pageSize)`. The cursor is the page's last entry, copied field by field
 * so nothing else of the stored row is handed out.
 */
export function cutBlockPage(rows: readonly BlockEntry[], pageSize: number): BlockListPage {
  const results = rows.slice(0, pageSize);
  const last = results.at(-1);
  return {
    results,
    paginationToken:
      rows.length > pageSize && last
        ? { netid_uid: last.netid_uid, blocked_userId: last.blocked_userId }
        : null,
  };
}
