import { randomUUID } from 'node:crypto';
import type { Db, Filter } from 'mongodb';
import { TRAY_RECORDS, type TrayRecordDoc, type TrayVerb } from '../../shared/tray/tray-record.ts';
import { casUpdateRecords, type ComputeRecord } from './cas-update-records.ts';
import { releaseClaims } from './claim-versions.ts';
import { cutPage, NO_MORE_PAGES, pageFetchLimit, startAfterRange } from './timestamp-page.ts';

export interface HistoryPage {
  records: TrayRecordDoc[];
  /** Next `startAfter`, or 0 when this is the last page. */
  nextPage: number;
}

export interface RecordQueries {
  /** Records updated after `lastReadAt` and not marked read. */
  countUnread(userId: string, lastReadAt: number, now: number): Promise<number>;
  count(userId: string, now: number, excludeVerbs?: readonly TrayVerb[]): Promise<number>;
  /** v3: records with lastUpdate below `startAfter`, whole groups of equal lastUpdate per page. */
  pageAfter(
    userId: string,
    startAfter: number | undefined,
    pageSize: number,
    now: number,
  ): Promise<HistoryPage>;
  /** v2: page `page` (1-based) of the same order. */
  pageNumber(
    userId: string,
    page: number,
    pageSize: number,
    now: number,
    excludeVerbs: readonly TrayVerb[],
  ): Promise<TrayRecordDoc[]>;
  markAllRead(userId: string): Promise<number>;
  /** false when the user has no (unexpired) record with this verb and target. */
  markRead(userId: string, verb: TrayVerb, targetId: string, now: number): Promise<boolean>;
  deleteAll(userId: string): Promise<number>;
}

/**
 * Marking read is a record write like the worker's, so it goes through the same compare-and-set
 * (claim `${_id}#${version}`, then write filtered on version). A plain `$set` is not enough: on
 * FerretDB updates are read-modify-write and not atomic, so it could silently undo a concurrent
 * worker write (new actors lost), and on MongoDB the worker could overwrite the read flag.
 */
const markRead: ComputeRecord = (_key, current) =>
  current && !current.hasRead ? { ...current, hasRead: true, version: current.version + 1 } : 'unchanged';

/** Claims of the API are owned by the request; a retry of a request is a new request. */
const apiWriter = () => ({ owner: `api:${randomUUID()}` });

/** Newest first; `_id` breaks ties so every page of the order is deterministic. */
const newestFirst = { lastUpdate: -1, _id: -1 } as const;

/**
 * Read side of `tray_records` (written by the worker). Every query takes the user id as a required
 * argument and filters out expired records: the purge/TTL may lag (DESIGN.md, "Storage rules").
 */
export function createRecordQueries(db: Db): RecordQueries {
  const records = db.collection<TrayRecordDoc>(TRAY_RECORDS);
  const live = (userId: string, now: number): Filter<TrayRecordDoc> => ({
    userId,
    expiresAt: { $gt: new Date(now) },
  });

  return {
    countUnread: (userId, lastReadAt, now) =>
      records.countDocuments({ ...live(userId, now), lastUpdate: { $gt: lastReadAt }, hasRead: false }),

    count: (userId, now, excludeVerbs = []) =>
      records.countDocuments({
        ...live(userId, now),
        ...(excludeVerbs.length ? { verb: { $nin: [...excludeVerbs] } } : {}),
      }),

    async pageAfter(userId, startAfter, pageSize, now) {
      const range = startAfterRange(startAfter);
      if (range === 'empty') return { records: [], nextPage: NO_MORE_PAGES };
      const base = live(userId, now);
      const limit = pageFetchLimit(pageSize);
      const rows = await records
        .find(range === 'all' ? base : { ...base, lastUpdate: range })
        .sort(newestFirst)
        .limit(limit)
        .toArray();
      const cut = cutPage(rows, pageSize, limit);
      if (cut.kind === 'complete') return { records: cut.records, nextPage: cut.nextPage };
      // A group of equal lastUpdate larger than the over-fetch: read the rest of it.
      const [rest, older] = await Promise.all([
        records
          .find({ ...base, lastUpdate: cut.boundary, _id: { $lt: cut.afterId } })
          .sort(newestFirst)
          .toArray(),
        records.findOne({ ...base, lastUpdate: { $lt: cut.boundary } }, { projection: { _id: 1 } }),
      ]);
      return { records: [...cut.records, ...rest], nextPage: older ? cut.boundary : NO_MORE_PAGES };
    },

    pageNumber: (userId, page, pageSize, now, excludeVerbs) =>
      records
        .find({ ...live(userId, now), ...(excludeVerbs.length ? { verb: { $nin: [...excludeVerbs] } } : {}) })
        .sort(newestFirst)
        .skip((page - 1) * pageSize)
        .limit(pageSize)
        .toArray(),

    async markAllRead(userId) {
      const unread = await records.find({ userId, hasRead: false }, { projection: { _id: 1 } }).toArray();
      const { written } = await casUpdateRecords(
        db,
        unread.map((r) => r._id),
        markRead,
        apiWriter(),
      );
      return written;
    },

    async markRead(userId, verb, targetId, now) {
      const found = await records
        .find({ ...live(userId, now), verb, targetId }, { projection: { _id: 1 } })
        .toArray();
      if (found.length === 0) return false;
      await casUpdateRecords(
        db,
        found.map((r) => r._id),
        markRead,
        apiWriter(),
      );
      return true;
    },

    async deleteAll(userId) {
      // Their claims go too: a record re-created under the same _id restarts at version 1.
      const deleted = await records.find({ userId }, { projection: { _id: 1, version: 1 } }).toArray();
      const { deletedCount } = await records.deleteMany({ userId });
      await releaseClaims(db, deleted);
      return deletedCount;
    },
  };
}
