import type { TrayRecord, TrayVerb } from '../domain/tray-record.ts';
import type { TrayRecordsPort } from '../storage/port.ts';
import { createCountCache } from './count-cache.ts';

/** v2 has no mention support (docs/contract.md#tray); `mentreact` is a reaction to a comment, not a mention, so v2 keeps it. */
export const V2_EXCLUDED_VERBS: readonly TrayVerb[] = ['mention'];

/** How long a user's record count is reused for `totalPages` (see count-cache.ts). */
const COUNT_TTL_MS = 5_000;

export interface V3Page {
  records: TrayRecord[];
  /** The next `startAfter`, or 0 on the last page. */
  nextPage: number;
  totalPages: number;
}

export interface V2Page {
  records: TrayRecord[];
  totalPages: number;
}

export interface HistoryPages {
  /** v3: records below `startAfter` (all when undefined), newest first, whole groups of equal lastUpdate. */
  v3(userId: string, startAfter: number | undefined, now: number): Promise<V3Page>;
  /** v2: numbered page (1-based) of the same order, without mentions. */
  v2(userId: string, page: number, now: number): Promise<V2Page>;
  /** Forgets the user's memoised totals (after a delete-all). */
  forget(userId: string): void;
}

/** The history pages of the tray API (docs/contract.md#tray), with their `totalPages`. */
export function createHistoryPages(records: TrayRecordsPort, pageSize: number): HistoryPages {
  const counts = createCountCache(COUNT_TTL_MS);
  const totalPages = (count: number) => Math.ceil(count / pageSize);
  // JSON keeps the user id and the version apart whatever characters the id contains.
  const countKey = (userId: string, version: 'v2' | 'v3') => JSON.stringify([userId, version]);
  return {
    async v3(userId, startAfter, now) {
      const [page, count] = await Promise.all([
        records.pageAfter(userId, startAfter, pageSize, now),
        counts.get(countKey(userId, 'v3'), now, () => records.count(userId, now)),
      ]);
      return { records: page.records, nextPage: page.nextPage, totalPages: totalPages(count) };
    },
    async v2(userId, page, now) {
      const [rows, count] = await Promise.all([
        records.pageNumber(userId, page, pageSize, now, V2_EXCLUDED_VERBS),
        counts.get(countKey(userId, 'v2'), now, () => records.count(userId, now, V2_EXCLUDED_VERBS)),
      ]);
      return { records: rows, totalPages: totalPages(count) };
    },
    forget(userId) {
      counts.forget(JSON.stringify([userId]).slice(0, -1));
    },
  };
}
