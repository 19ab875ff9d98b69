import type { InboxRecord } from '../domain/inbox-record.ts';
import type { InboxView } from '../domain/inbox-view.ts';
import type { TrayRecord, TrayVerb } from '../domain/tray-record.ts';
import type { TrayStorage } from '../storage/port.ts';
import { createCountCache } from './count-cache.ts';
import { requireInbox } from './require-inbox.ts';

/** v2 has no mention support (docs/contract.md#tray); `mentreact` is a reaction to a comment, not a mention, so v2 keeps it. */
export const V2_EXCLUDED_VERBS: readonly TrayVerb[] = ['mention'];

/** How long a user's record count is reused for `totalPages` (see count-cache.ts). */
const COUNT_TTL_MS = 5_000;

export interface V3Page {
  /** With their inbox state when the storage has the inbox extensions. */
  records: (TrayRecord | InboxRecord)[];
  /** The next `startAfter`, or 0 on the last page. */
  nextPage: number;
  totalPages: number;
}

export interface V2Page {
  records: TrayRecord[];
  totalPages: number;
}

export interface HistoryPages {
  /**
   * v3: records of `view` below `startAfter` (all when undefined), newest first, whole groups of
   * equal lastUpdate. Without the inbox extensions only the `inbox` view exists (the platform's
   * history); another view is InboxUnsupportedError.
   */
  v3(
    userId: string,
    query: { startAfter: number | undefined; view: InboxView },
    now: number,
  ): Promise<V3Page>;
  /** v2: numbered page (1-based) of the inbox in the same order, without mentions. */
  v2(userId: string, page: number, now: number): Promise<V2Page>;
  /** Forgets the user's memoised totals (after a delete-all or an inbox mark). */
  forget(userId: string): void;
}

/** The history pages of the tray API (docs/contract.md#tray, docs/tray-rules.md#inbox), with their `totalPages`. */
export function createHistoryPages(
  storage: Pick<TrayStorage, 'records' | 'inbox' | 'engine'>,
  pageSize: number,
): HistoryPages {
  const { records } = storage;
  const counts = createCountCache(COUNT_TTL_MS);
  const totalPages = (count: number) => Math.ceil(count / pageSize);
  // JSON keeps the user id and the version apart whatever characters the id contains.
  const countKey = (userId: string, version: 'v2' | InboxView) => JSON.stringify([userId, version]);
  const count = (userId: string, view: InboxView, now: number) =>
    counts.get(countKey(userId, view), now, () =>
      // The platform's count is the inbox's, so it serves the inbox view on every adapter.
      view === 'inbox' ? records.count(userId, now) : requireInbox(storage).countView(userId, view, now),
    );
  return {
    async v3(userId, { startAfter, view }, now) {
      const { inbox } = storage;
      const [page, total] = await Promise.all([
        inbox || view !== 'inbox'
          ? requireInbox(storage).page(userId, view, startAfter, pageSize, now)
          : records.pageAfter(userId, startAfter, pageSize, now),
        count(userId, view, now),
      ]);
      return { records: page.records, nextPage: page.nextPage, totalPages: totalPages(total) };
    },
    async v2(userId, page, now) {
      const key = countKey(userId, 'v2');
      const countNow = () => records.count(userId, now, V2_EXCLUDED_VERBS);
      let countedNow = false;
      const [rows, reused] = await Promise.all([
        records.pageNumber(userId, page, pageSize, now, V2_EXCLUDED_VERBS),
        counts.get(key, now, () => ((countedNow = true), countNow())),
      ]);
      // The count is reused for a while (COUNT_TTL_MS), the rows read fresh: records it lags
      // (another instance's unarchive, a wake-up) would be missed by a client that loops
      // totalPages times. Counted again, and kept, when the page shows the reused count short:
      // rows past it, or a full page where it ends and a record after that page (one row asked).
      const counted = totalPages(reused);
      if (countedNow || rows.length === 0 || page < counted) return { records: rows, totalPages: counted };
      const short =
        (page - 1) * pageSize + rows.length > reused ||
        (rows.length === pageSize &&
          (await records.pageNumber(userId, page * pageSize + 1, 1, now, V2_EXCLUDED_VERBS)).length > 0);
      if (!short) return { records: rows, totalPages: counted };
      counts.forget(key);
      return { records: rows, totalPages: totalPages(await counts.get(key, now, countNow)) };
    },
    forget(userId) {
      counts.forget(JSON.stringify([userId]).slice(0, -1));
    },
  };
}
