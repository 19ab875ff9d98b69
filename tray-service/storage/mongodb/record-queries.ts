import { randomUUID } from 'node:crypto';
import type { Db, Filter } from 'mongodb';
import { type TrayVerb } from '../../domain/tray-verb.ts';
import { TRAY_RECORDS } from './collection-names.ts';
import { type TrayRecordDoc } from './tray-record-doc.ts';
import { recordKey } from '../../domain/activity.ts';
import { casUpdateRecords, type ComputeRecord } from './cas-update-records.ts';
import { createSortedPages } from './sorted-pages.ts';

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
  /**
   * The user's unexpired records whose `changedAt` is after `since`, oldest change first: what a
   * reconnecting live stream missed, read in the order of the `user_changes` index.
   */
  changedSince(userId: string, since: number, now: number): Promise<TrayRecordDoc[]>;
}

/**
 * Marking read is a record write like the worker's, so it goes through the same compare-and-set
 * (claim `${_id}#${version}`, then write filtered on version). A plain `$set` is not enough: on
 * FerretDB updates are read-modify-write and not atomic, so it could silently undo a concurrent
 * worker write (new actors lost), and on MongoDB the worker could overwrite the read flag.
 */
export const markReadCompute: ComputeRecord = (_key, current) =>
  current && !current.hasRead ? { ...current, hasRead: true, version: current.version + 1 } : 'unchanged';

/**
 * Whether a record read by its stored key is this (user, verb, target)'s. Keys are escaped now, but
 * records written before under the plain join `verb_target_user` can still be stored under a key
 * another triple's ids spell; checking the record's own fields keeps those apart too.
 */
export const isRecordOf = (record: TrayRecordDoc, userId: string, verb: TrayVerb, targetId: string) =>
  record.userId === userId && record.verb === verb && record.targetId === targetId;

/** Claims of the API are owned by the request; a retry of a request is a new request. */
export const apiWriter = () => ({ owner: `api:${randomUUID()}` });

export interface RecordQueryOptions {
  /** Told of the records marked read (live streams, docs/live-tray.md), after the write. */
  onMarkedRead?: (records: readonly TrayRecordDoc[]) => Promise<void>;
}

/**
 * Read side of `tray_records` (written by the worker). Every query takes the user id as a required
 * argument and is served by a compound index on it (tray-records-collection.ts): pages by sort and
 * limit on the index order, counts by countDocuments from the index alone. Expired records are
 * filtered out here too: TTL and the purge may lag.
 */
export function createRecordQueries(db: Db, options: RecordQueryOptions = {}): RecordQueries {
  const records = db.collection<TrayRecordDoc>(TRAY_RECORDS);
  const pages = createSortedPages(db);
  const told = options.onMarkedRead ? { onWritten: options.onMarkedRead } : {};
  const live = (userId: string, now: number): Filter<TrayRecordDoc> => ({
    userId,
    expiresAt: { $gt: new Date(now) },
  });

  return {
    countUnread: (userId, lastReadAt, now) =>
      records.countDocuments({
        userId,
        hasRead: false,
        unreadAt: { $gt: lastReadAt },
        expiresAt: { $gt: new Date(now) },
      }),

    count: (userId, now, excludeVerbs = []) =>
      records.countDocuments({
        ...live(userId, now),
        ...(excludeVerbs.length > 0 ? { verb: { $nin: [...excludeVerbs] } } : {}),
      }),

    pageAfter: pages.pageAfter,
    pageNumber: pages.pageNumber,

    async markAllRead(userId) {
      const unread = await records.find({ userId, hasRead: false }).toArray();
      const { written } = await casUpdateRecords(
        db,
        unread.map((r) => r._id),
        markReadCompute,
        { ...apiWriter(), ...told, first: new Map(unread.map((r) => [r._id, r])) },
      );
      return written;
    },

    async markRead(userId, verb, targetId, now) {
      const key = recordKey(verb, targetId, userId);
      // The caller's id as well as the key: a record is only ever its own user's to read or mark;
      // isRecordOf also checks verb and target, for records stored under the former plain-join key.
      const found = await records.findOne({ _id: key, userId });
      if (!found || !isRecordOf(found, userId, verb, targetId) || found.expiresAt.getTime() <= now)
        return false;
      await casUpdateRecords(db, [key], markReadCompute, {
        ...apiWriter(),
        ...told,
        first: new Map([[key, found]]),
      });
      return true;
    },

    // A record re-created under the same _id starts at a new version (its creation time), so the
    // claims of the deleted ones need no clean-up: they expire with the purge.
    deleteAll: async (userId) => (await records.deleteMany({ userId })).deletedCount,

    changedSince: (userId, since, now) =>
      records
        // A record written before live streams has no changedAt and counts as changed at 0, so it
        // is after a negative `since` only; the missing field sorts first, as 0 would.
        .find({ ...live(userId, now), ...(since >= 0 ? { changedAt: { $gt: since } } : {}) })
        .sort({ changedAt: 1, _id: 1 })
        .toArray(),
  };
}
