// The plain indexed statements `npm run bench:api` compares the tray API with: what an app back end
// querying the table itself would send, each on the partial index that serves its view or count
// (tray-service/storage/postgres/migrations/0005_inbox.sql). Shared by the bench, its client and
// its bare HTTP floor.
import type { InboxView } from '../../tray-service/domain/inbox-view.ts';

/** One statement and its values, as node-postgres takes it. */
export interface PlainStatement {
  text: string;
  values: unknown[];
}

/** Each view's predicate, the same as its partial index's. */
const VIEW_PREDICATE: Record<InboxView, string> = {
  inbox: 'in_inbox',
  archived: 'archived_at IS NOT NULL',
  snoozed: 'snoozed_until IS NOT NULL',
  all: 'true',
};

/** A user's page of one view, newest first, one more row than the page to look ahead. */
export function plainPage(
  userId: string,
  view: InboxView,
  startAfter: number | undefined,
  pageSize: number,
): PlainStatement {
  return {
    text: `SELECT * FROM tray_records WHERE user_id = $1 AND ${VIEW_PREDICATE[view]}
      AND ($2::bigint IS NULL OR last_update < $2) ORDER BY last_update DESC, key DESC LIMIT ${pageSize + 1}`,
    values: [userId, startAfter ?? null],
  };
}

/** The unread records of a user's inbox, counted by their partial index, nothing else. */
export const plainUnreadCount = (userId: string): PlainStatement => ({
  text: 'SELECT count(*)::int AS n FROM tray_records WHERE user_id = $1 AND NOT has_read AND in_inbox',
  values: [userId],
});

/** The unseen records of a user's inbox, counted by their partial index, nothing else. */
export const plainUnseenCount = (userId: string): PlainStatement => ({
  text: 'SELECT count(*)::int AS n FROM tray_records WHERE user_id = $1 AND NOT is_seen AND in_inbox',
  values: [userId],
});

/**
 * Where a deep page of `view` starts: the lastUpdate of the user's record `offset` places down the
 * view (a cursor a client would hold after walking offset / pageSize pages), or undefined when the
 * view is shorter.
 */
export const deepCursor = (userId: string, view: InboxView, offset: number): PlainStatement => ({
  text: `SELECT last_update::float8 AS at FROM tray_records WHERE user_id = $1 AND ${VIEW_PREDICATE[view]}
    ORDER BY last_update DESC, key DESC OFFSET $2 LIMIT 1`,
  values: [userId, offset],
});
