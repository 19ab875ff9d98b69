import type { InboxRecord } from '../domain/inbox-record.ts';
import type { ChangesPage, TrayStorage } from '../storage/port.ts';

/**
 * Records a catch-up reads at once: a page is written to the stream and taken by its client before
 * the next is read, so a backlog of any size reaches it without holding it all in memory (a record
 * is about a kilobyte).
 */
export const CATCH_UP_PAGE = 100;

/** When the user last deleted their whole tray; 0 when never. */
export function lastClear(storage: Pick<TrayStorage, 'clears'>, userId: string): Promise<number> {
  return storage.clears.latest(userId);
}

/**
 * What a reconnecting live stream missed since `since` (docs/live-tray.md): the unexpired records
 * changed after it, with their inbox state, oldest change first, a page at a time.
 */
export async function* streamCatchUp(
  storage: Pick<TrayStorage, 'records'>,
  userId: string,
  since: number,
  now: number,
  limit = CATCH_UP_PAGE,
): AsyncGenerator<InboxRecord[]> {
  let page: ChangesPage = { limit };
  for (;;) {
    const records = await storage.records.changedSince(userId, since, now, page);
    const last = records[records.length - 1];
    if (last) yield records;
    if (!last || records.length < limit) return;
    page = { limit, after: { changedAt: last.changedAt, key: last.key } };
  }
}
