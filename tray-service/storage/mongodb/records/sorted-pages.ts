import type { Db, Filter } from 'mongodb';
import { type TrayVerb } from '../../../domain/tray-verb.ts';
import { TRAY_RECORDS } from '../collections/collection-names.ts';
import { type TrayRecordDoc } from '../collections/tray-records-collection.ts';
import type { RecordBox } from '../collections/record-box.ts';
import { cutPage, NO_MORE_PAGES, pageFetchLimit, startAfterRange } from './timestamp-page.ts';

/** The history order: newest first, `_id` breaking ties (the `user_history` index's order). */
const NEWEST_FIRST = { lastUpdate: -1, _id: -1 } as const;

/**
 * History pages: the user's records of one box (`box_history`: userId, box, lastUpdate desc,
 * _id desc), or of all of them (`user_history`), in index order with a limit, so on MongoDB a page reads about its own rows whatever the user's history
 * holds. A page that ends inside a group of equal lastUpdate reads the rest of the group, and one
 * row below it tells whether more pages follow (timestamp-page.ts). FerretDB sorts in memory what
 * the user id selects: the same pages, at a cost that grows with the user's history.
 */
export function createSortedPages(db: Db) {
  const records = db.collection<TrayRecordDoc>(TRAY_RECORDS);
  const live = (
    userId: string,
    now: number,
    excludeVerbs: readonly TrayVerb[],
    box: RecordBox | undefined,
  ): Filter<TrayRecordDoc> => ({
    userId,
    ...(box === undefined ? {} : { box }),
    expiresAt: { $gt: new Date(now) },
    ...(excludeVerbs.length > 0 ? { verb: { $nin: [...excludeVerbs] } } : {}),
  });
  return {
    async pageAfter(
      userId: string,
      startAfter: number | undefined,
      pageSize: number,
      now: number,
      /** The box listed; undefined: every record (the `all` view). */
      box: RecordBox | undefined,
    ): Promise<{ records: TrayRecordDoc[]; nextPage: number }> {
      const range = startAfterRange(startAfter);
      if (range === 'empty') return { records: [], nextPage: NO_MORE_PAGES };
      const filter = { ...live(userId, now, [], box), ...(range === 'all' ? {} : { lastUpdate: range }) };
      const limit = pageFetchLimit(pageSize);
      const rows = await records.find(filter).sort(NEWEST_FIRST).limit(limit).toArray();
      const cut = cutPage(rows, pageSize, limit);
      if (cut.kind === 'complete') return { records: cut.records, nextPage: cut.nextPage };
      // The page ends in a group of equal lastUpdate longer than the rows fetched: its rest, then
      // whether anything older follows.
      const rest = await records
        .find({ ...live(userId, now, [], box), lastUpdate: cut.boundary, _id: { $lt: cut.afterId } })
        .sort(NEWEST_FIRST)
        .toArray();
      const older = await records
        .find({ ...live(userId, now, [], box), lastUpdate: { $lt: cut.boundary } })
        .sort(NEWEST_FIRST)
        .limit(1)
        .toArray();
      return {
        records: [...cut.records, ...rest],
        nextPage: older.length > 0 ? cut.boundary : NO_MORE_PAGES,
      };
    },
    pageNumber: (
      userId: string,
      page: number,
      pageSize: number,
      now: number,
      excludeVerbs: readonly TrayVerb[],
    ): Promise<TrayRecordDoc[]> =>
      records
        // v2 history lists the inbox only (docs/tray-rules.md#inbox).
        .find(live(userId, now, excludeVerbs, 'inbox'))
        .sort(NEWEST_FIRST)
        .skip((page - 1) * pageSize)
        .limit(pageSize)
        .toArray(),
  };
}

/** The history pages of createSortedPages, as stored (mongo-records.ts hands them out in the reader's shape). */
export type SortedPages = ReturnType<typeof createSortedPages>;
