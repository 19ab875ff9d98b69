// The plain indexed statements `npm run bench:api` compares the tray API with: what an app back end
// querying the table itself would send. Shared by the bench's client and its bare HTTP floor.

/** A user's unread records counted by the user's index, nothing else. */
export const PLAIN_COUNT_SQL = 'SELECT count(*) FROM tray_records WHERE user_id = $1 AND NOT has_read';

/** A user's page of records newest first by the user's index, one more row than the page to look ahead. */
export const plainPageSql = (pageSize: number) =>
  `SELECT * FROM tray_records WHERE user_id = $1 AND ($2::bigint IS NULL OR last_update < $2)
   ORDER BY last_update DESC, key DESC LIMIT ${pageSize + 1}`;
