import type pg from 'pg';

/** `startAfter` absent or 1 (the contract's default) is the first page; 0 or less is past the end. */
const FIRST_PAGE = 1;
const NO_MORE_PAGES = 0;

/**
 * A v3 page of the rows of `table` a user has under `condition` (a view's predicate, matching a
 * partial index): newest first with LIMIT, `pageSize` of them and as many again to look ahead, so
 * that the page's last group of equal lastUpdate (never split across pages: a v3 cursor is a bare
 * timestamp) and whether anything lies below it are known from this one statement, unless that
 * group runs on past the look-ahead. The statements are planned for their values on every call
 * (unnamed): prepared, PostgreSQL would switch to a generic plan after five runs, costed for the
 * average user, and where most users have few records that plan bitmap-scans and sorts the
 * caller's whole tray for the LIMIT. Rows are made records (`toRecord`) only once they are known to
 * be on the page: the look-ahead's rows answer where the page ends and are otherwise dropped, and
 * building a record for each was most of what a page call allocated after the driver's parsing.
 */
export async function viewPage<R extends { last_update: string; key: string }, T>(
  pool: Pick<pg.Pool, 'query'>,
  toRecord: (row: R) => T,
  select: { columns: string; condition: string },
  userId: string,
  startAfter: number | undefined,
  pageSize: number,
  now: number,
): Promise<{ records: T[]; nextPage: number }> {
  const query = async (sql: string, params: unknown[]) => (await pool.query<R>(sql, params)).rows;
  const page = (rows: R[], nextPage: number) => ({ records: rows.map(toRecord), nextPage });
  if (startAfter !== undefined && startAfter !== FIRST_PAGE && startAfter <= NO_MORE_PAGES)
    return { records: [], nextPage: NO_MORE_PAGES };
  if (pageSize < 1) throw new Error('pageAfter: pageSize must be at least 1');
  const { columns, condition } = select;
  const upper = startAfter === undefined || startAfter === FIRST_PAGE ? null : startAfter;
  const limit = 2 * pageSize + 1;
  const head = await query(
    `SELECT ${columns} FROM tray_records
     WHERE user_id = $1 AND ${condition} AND ($2::bigint IS NULL OR last_update < $2) AND expires_at > $3
     ORDER BY last_update DESC, key DESC LIMIT $4`,
    [userId, upper, now, limit],
  );
  if (head.length <= pageSize) return page(head, NO_MORE_PAGES);
  const last = head[pageSize - 1];
  if (!last) throw new Error('pageAfter: pageSize must be at least 1');
  // bigint columns come as their decimal text: equal texts are equal numbers.
  const lastUpdate = Number(last.last_update);
  let end = pageSize;
  while (head[end]?.last_update === last.last_update) end += 1;
  // A record below the page's last group: the page ends there and more follow.
  if (end < head.length) return page(head.slice(0, end), lastUpdate);
  // The user's records ran out within the look-ahead: the page is all of them.
  if (head.length < limit) return page(head, NO_MORE_PAGES);
  // The last group runs on past the look-ahead: the rest of it, then whether any lies below.
  const rest = await query(
    `SELECT ${columns} FROM tray_records
     WHERE user_id = $1 AND ${condition} AND last_update = $2 AND key < $3 AND expires_at > $4
     ORDER BY key DESC`,
    [userId, lastUpdate, head[head.length - 1]?.key, now],
  );
  const more = await pool.query(
    `SELECT 1 FROM tray_records WHERE user_id = $1 AND ${condition} AND last_update < $2 AND expires_at > $3
     ORDER BY last_update DESC LIMIT 1`,
    [userId, lastUpdate, now],
  );
  return page([...head, ...rest], more.rowCount ? lastUpdate : NO_MORE_PAGES);
}
