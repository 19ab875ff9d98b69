import { randomUUID } from 'node:crypto';
import type { Counter } from './create-counter.ts';
import type { Db, Filter } from 'mongodb';
import { TRAY_RECORDS, type TrayRecordDoc, type TrayVerb } from '../../../shared/tray/tray-record.ts';
import { recordKey } from '../../domain/activity.ts';
import { casUpdateRecords, type ComputeRecord } from './cas-update-records.ts';
import { completeAbove, nextRound } from './history-walk.ts';
import { createSortedPages } from './sorted-pages.ts';
import { cutPage, NO_MORE_PAGES, startAfterRange } from './timestamp-page.ts';

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
   * reconnecting live stream missed. Selects by the user id (the page-count query) and filters in
   * memory, like the count; see docs/live-tray.md for its cost on heavy users.
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

/** Newest first; `_id` breaks ties so every page of the order is deterministic. */
const newestFirst = (a: TrayRecordDoc, b: TrayRecordDoc) =>
  b.lastUpdate - a.lastUpdate || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0);

/** History buckets read at once at most: a sparse history's page may span many hours. */
const MAX_PARALLEL_BUCKETS = 16;

export interface RecordQueryOptions {
  /**
   * Counts in the storage's cheapest way (createCounter). Required: the driver's countDocuments
   * on FerretDB decodes every record it counts, so a silent default would be the slow path.
   */
  counter: Counter;
  /**
   * `sorted`: pages in the `user_history` index's order with a limit (MongoDB, where an index
   * serves the sort); `buckets` (the default): the bucket walk, for FerretDB, which sorts in memory.
   */
  pages?: 'sorted' | 'buckets';
  /** Told of the records marked read (live streams, docs/live-tray.md), after the write. */
  onMarkedRead?: (records: readonly TrayRecordDoc[]) => Promise<void>;
}

/**
 * Read side of `tray_records` (written by the worker). Every query takes the user id as a required
 * argument and selects by an equality an index serves (docs/storage.md): the user id, a history
 * bucket or the record's `_id`. Expired records are filtered out here too: the purge may lag.
 */
export function createRecordQueries(db: Db, options: RecordQueryOptions): RecordQueries {
  const records = db.collection<TrayRecordDoc>(TRAY_RECORDS);
  const { counter } = options;
  const sorted = options.pages === 'sorted' ? createSortedPages(db) : undefined;
  const told = options.onMarkedRead ? { onWritten: options.onMarkedRead } : {};
  const live = (userId: string, now: number): Filter<TrayRecordDoc> => ({
    userId,
    expiresAt: { $gt: new Date(now) },
  });

  /**
   * The user's records newest first, down to where `enough` says the rows read settle the page
   * (`want`: the rows it expects to need). Reads whole history buckets in the order the user's
   * bucket counts give (history-walk.ts), and returns only rows known complete: none of an unread
   * bucket could sort before them.
   */
  async function walk(
    userId: string,
    upper: number | undefined,
    now: number,
    excludeVerbs: readonly TrayVerb[],
    want: number,
    enough: (rows: TrayRecordDoc[]) => boolean,
  ): Promise<TrayRecordDoc[]> {
    const excluded = new Set<string>(excludeVerbs);
    // One indexed count in PostgreSQL on FerretDB (a few milliseconds for a thousand records):
    // only buckets holding one of the page's records are read, and none of the empty hours.
    const buckets = await counter.countBy(
      TRAY_RECORDS,
      {
        equal: { userId },
        ...(excludeVerbs.length ? { notIn: { verb: excludeVerbs } } : {}),
        above: { expiresAt: new Date(now) },
        ...(upper === undefined ? {} : { below: { lastUpdate: upper } }),
      },
      { by: 'bucket', newest: 'lastUpdate' },
    );
    // By _id: a record rewritten into a newer bucket while the walk runs is kept once.
    const read = new Map<string, TrayRecordDoc>();
    let rows: TrayRecordDoc[] = [];
    for (let start = 0, counted = 0; start < buckets.length;) {
      const end = nextRound(buckets, start, counted, want, MAX_PARALLEL_BUCKETS);
      const round = buckets.slice(start, end);
      const found = await Promise.all(round.map(({ key }) => records.find({ bucket: key }).toArray()));
      for (const doc of found.flat()) {
        const kept = read.get(doc._id);
        if (
          doc.userId === userId &&
          doc.expiresAt.getTime() > now &&
          (upper === undefined || doc.lastUpdate < upper) &&
          !excluded.has(doc.verb) &&
          (kept === undefined || kept.lastUpdate < doc.lastUpdate)
        )
          read.set(doc._id, doc);
      }
      for (const bucket of round) counted += bucket.count;
      start = end;
      const bound = completeAbove(buckets, start);
      rows = [...read.values()].filter((doc) => doc.lastUpdate > bound).sort(newestFirst);
      if (enough(rows)) return rows;
    }
    return rows;
  }

  return {
    countUnread: (userId, lastReadAt, now) =>
      counter.count(TRAY_RECORDS, {
        equal: { userId, hasRead: false },
        above: { unreadAt: lastReadAt, expiresAt: new Date(now) },
      }),

    count: (userId, now, excludeVerbs = []) =>
      counter.count(TRAY_RECORDS, {
        equal: { userId },
        ...(excludeVerbs.length ? { notIn: { verb: excludeVerbs } } : {}),
        above: { expiresAt: new Date(now) },
      }),

    async pageAfter(userId, startAfter, pageSize, now) {
      if (sorted) return sorted.pageAfter(userId, startAfter, pageSize, now);
      const range = startAfterRange(startAfter);
      if (range === 'empty') return { records: [], nextPage: NO_MORE_PAGES };
      const upper = range === 'all' ? undefined : range.$lt;
      // Settled once the page's last timestamp group is complete and one older row is known.
      const settled = (rows: TrayRecordDoc[]) => {
        const boundary = rows[pageSize - 1]?.lastUpdate;
        return boundary !== undefined && rows.some((row) => row.lastUpdate < boundary);
      };
      const rows = await walk(userId, upper, now, [], pageSize + 1, settled);
      const cut = cutPage(rows, pageSize, rows.length + 1);
      return { records: cut.records, nextPage: cut.kind === 'complete' ? cut.nextPage : NO_MORE_PAGES };
    },

    async pageNumber(userId, page, pageSize, now, excludeVerbs) {
      if (sorted) return sorted.pageNumber(userId, page, pageSize, now, excludeVerbs);
      const want = page * pageSize;
      const rows = await walk(userId, undefined, now, excludeVerbs, want, (found) => found.length >= want);
      return rows.slice((page - 1) * pageSize, page * pageSize);
    },

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

    async changedSince(userId, since, now) {
      const found = await records.find(live(userId, now)).toArray();
      return found
        .filter((record) => (record.changedAt ?? 0) > since)
        .sort((a, b) => (a.changedAt ?? 0) - (b.changedAt ?? 0) || (a._id < b._id ? -1 : 1));
    },
  };
}
