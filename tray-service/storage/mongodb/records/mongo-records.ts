import type { Db, Filter } from 'mongodb';
import { recordKey } from '../../../domain/activity.ts';
import { decodeRecordKey } from '../../../domain/record-key.ts';
import type { TrayVerb } from '../../../domain/tray-verb.ts';
import {
  type LatestTimesPort,
  type MarkedRecord,
  type TellMarked,
  type TrayRecordsPort,
} from '../../port.ts';
import { TRAY_RECORDS } from '../collections/collection-names.ts';
import { type ComputeRecord } from '../compare-and-set/cas-update-records.ts';
import { markReadAndSeen } from '../../../domain/seen-mark.ts';
import { withInboxChange } from './with-inbox-change.ts';
import { leaveMadeUnread } from './leave-made-unread.ts';
import { markClock } from '../../mark-clock.ts';
import { markInBatches } from './mark-in-batches.ts';
import { writeMarked } from './write-marked.ts';
import { createSortedPages } from './sorted-pages.ts';
import { toInboxRecord, toTrayRecord } from './to-tray-record.ts';
import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';

/**
 * Marking read (which also sees the record) is a record write like the worker's, so it goes
 * through the same compare-and-set (claim `${_id}#${version}`, then write filtered on version). A
 * plain `$set` is not enough: on FerretDB updates are read-modify-write and not atomic, so it could
 * silently undo a concurrent worker write (new actors lost), and on MongoDB the worker could
 * overwrite the read flag.
 */
const markReadCompute: ComputeRecord = (_key, current) =>
  current ? withInboxChange(current, markReadAndSeen(current)) : 'unchanged';

/** The platform's pages and counts are the inbox's (docs/tray-rules.md#inbox). */
const IN_INBOX = { box: 'inbox' } as const;

/**
 * Whether a record read by its stored key is this (user, verb, target)'s. Keys are escaped now, but
 * records written before under the plain join `verb_target_user` can still be stored under a key
 * another triple's ids spell; checking the record's own fields keeps those apart too.
 */
const isRecordOf = (record: TrayRecordDoc, userId: string, verb: TrayVerb, targetId: string) =>
  record.userId === userId && record.verb === verb && record.targetId === targetId;

/** Up to this many keys, byKeys reads each by its `_id` (see there). */
const KEYS_READ_ONE_BY_ONE = 8;

/**
 * The storage port's tray records on MongoDB (`tray_records`, written by the worker). Every query
 * takes the user id as a required argument and is served by a compound index on it
 * (tray-records-collection.ts): pages by sort and limit on the index order (sorted-pages.ts),
 * counts by countDocuments from the index alone. Expired records are filtered out here too: TTL
 * and the purge may lag. Marking read goes through the same compare-and-set as the worker's
 * writes, each call collecting the records it changed. Every record leaves in the reader's shape
 * (toTrayRecord), and with its inbox state where a stream shows it (changedSince: toInboxRecord).
 */
export function createMongoRecords(
  db: Db,
  options: {
    /** The users' last-read times, for countUnread(userId, 'recorded', now). */
    lastRead: Pick<LatestTimesPort, 'latest'>;
  },
): TrayRecordsPort {
  const records = db.collection<TrayRecordDoc>(TRAY_RECORDS);
  const pages = createSortedPages(db);
  const live = (userId: string, now: number): Filter<TrayRecordDoc> => ({
    userId,
    expiresAt: { $gt: new Date(now) },
  });

  /**
   * Marks `found` read by `compute`, stamped by `clock`, each bulk told to `tell` once stored;
   * returns the records this call changed, as stored.
   */
  const markFound = (
    found: readonly TrayRecordDoc[],
    clock: () => number,
    compute = markReadCompute,
    tell?: TellMarked,
  ): Promise<MarkedRecord[]> => writeMarked(db, found, compute, { clock, shape: toTrayRecord, tell });

  /** Whether the user has a live record stored under `key`. */
  const liveUnder = async (userId: string, key: string, now: number): Promise<boolean> =>
    (await records.findOne({ _id: key, ...live(userId, now) }, { projection: { _id: 1 } })) !== null;

  /**
   * Whether a record stored under its former plain-join key (`verb_target_user`, written before
   * keys were escaped: docs/storage.md) has a live twin under the escaped key, written by new
   * activity on its group since. Both would hand out one key; the catch-up sends the twin alone,
   * so a page never ends on a key two records share.
   */
  const hasTwin = async (doc: TrayRecordDoc, now: number): Promise<boolean> => {
    const key = recordKey(doc.verb, doc.targetId, doc.userId);
    return key !== doc._id && (await liveUnder(doc.userId, key, now));
  };

  /**
   * The stored _id of the record a catch-up page ended on, handed out as `key`: the key itself, or
   * the plain join of its parts for a record stored before keys were escaped with no twin (only a
   * key with an escape can differ).
   */
  const storedIdOf = async (userId: string, key: string, now: number): Promise<string> => {
    const identity = decodeRecordKey(key);
    if (!identity || !key.includes('%')) return key;
    if (await liveUnder(userId, key, now)) return key;
    const former = `${identity.verb}_${identity.targetId}_${identity.userId}`;
    // That _id may spell another triple's key: the record's own fields say whose it is.
    const found = await records.findOne(
      { _id: former, userId },
      { projection: { _id: 1, userId: 1, verb: 1, targetId: 1 } },
    );
    return found && isRecordOf(found, userId, identity.verb as TrayVerb, identity.targetId) ? former : key;
  };

  /**
   * Up to `limit` of the user's live records matching `range`, oldest change first then by _id,
   * a former-key record with a twin left out (hasTwin): read on past those, so a page is short
   * only at the end.
   */
  const changedIn = async (userId: string, now: number, range: Filter<TrayRecordDoc>, limit: number) => {
    const kept: TrayRecordDoc[] = [];
    const cursor = records
      .find({ ...live(userId, now), ...range })
      .sort({ changedAt: 1, _id: 1 })
      .batchSize(Math.min(limit, 1_000));
    try {
      for await (const doc of cursor) {
        if (await hasTwin(doc, now)) continue;
        kept.push(doc);
        if (kept.length >= limit) break;
      }
    } finally {
      await cursor.close();
    }
    return kept;
  };

  return {
    async countUnread(userId, lastReadAt, now) {
      // No MongoDB command reads two collections at once: the last-read time first, then the count.
      const since = lastReadAt === 'recorded' ? await options.lastRead.latest(userId) : lastReadAt;
      return records.countDocuments({
        userId,
        hasRead: false,
        ...IN_INBOX,
        unreadAt: { $gt: since },
        expiresAt: { $gt: new Date(now) },
      });
    },
    count: (userId, now, excludeVerbs = []) =>
      records.countDocuments({
        ...live(userId, now),
        ...IN_INBOX,
        ...(excludeVerbs.length > 0 ? { verb: { $nin: [...excludeVerbs] } } : {}),
      }),
    async pageAfter(userId, startAfter, pageSize, now) {
      const page = await pages.pageAfter(userId, startAfter, pageSize, now, 'inbox');
      return { records: page.records.map(toTrayRecord), nextPage: page.nextPage };
    },
    async pageNumber(userId, page, pageSize, now, excludeVerbs) {
      return (await pages.pageNumber(userId, page, pageSize, now, excludeVerbs)).map(toTrayRecord);
    },
    async markRead(userId, verb, targetId, now) {
      // The caller's id as well as the key: a record is only ever its own user's to read or mark;
      // isRecordOf also checks verb and target, for records stored under the former plain-join key.
      const found = await records.findOne({ _id: recordKey(verb, targetId, userId), userId });
      if (!found || !isRecordOf(found, userId, verb, targetId) || found.expiresAt.getTime() <= now)
        return { found: false, changed: [] };
      return { found: true, changed: await markFound([found], markClock(now)) };
    },
    // A batch at a time, expired records left out by the query: a user with a large unread backlog
    // is not read into memory whole. Each batch stamped when written, and told once stored.
    markAllRead(userId, now, tell) {
      const clock = markClock(now);
      return markInBatches(
        records.find({ userId, hasRead: false, expiresAt: { $gt: new Date(now) } }),
        (found) => markFound(found, clock, leaveMadeUnread(found, markReadCompute), tell),
      );
    },
    // A record re-created under the same _id starts at a first version of its own (firstVersion),
    // so the claims of the deleted ones need no clean-up: they expire with the purge.
    deleteAll: async (userId) => (await records.deleteMany({ userId })).deletedCount,
    async changedSince(userId, since, now, page) {
      // A record written before live streams has no changedAt and counts as changed at 0, so it is
      // after a negative `since` only; the missing field sorts first, as 0 would.
      const sinceRange: Filter<TrayRecordDoc> = since >= 0 ? { changedAt: { $gt: since } } : {};
      const after = page?.after;
      const limit = page?.limit ?? Number.POSITIVE_INFINITY;
      if (!after) return (await changedIn(userId, now, sinceRange, limit)).map(toInboxRecord);
      // A later page, as two reads that each walk user_changes from where the last page ended
      // (no $or, which FerretDB cannot push down, and which scanned from `since` on every page):
      // the rest of the records changed at the last one's time, then those changed after it.
      // Pages continue by the stored _id, the order they are read in: for a record stored under
      // its former key that is not the key it was handed out with, which sorts before it when an
      // id holds `_` (`%5F`), and a page continued from the key read it and those after it again.
      const found: TrayRecordDoc[] = [];
      if (since < 0 || after.changedAt > since) {
        const afterId = await storedIdOf(userId, after.key, now);
        const tie = after.changedAt === 0 ? { $exists: false } : after.changedAt;
        found.push(...(await changedIn(userId, now, { changedAt: tie, _id: { $gt: afterId } }, limit)));
      }
      if (found.length < limit) {
        const from = Math.max(after.changedAt, since);
        found.push(...(await changedIn(userId, now, { changedAt: { $gt: from } }, limit - found.length)));
      }
      return found.map(toInboxRecord);
    },
    async byKeys(userId, keys, now) {
      const wanted = [...new Set(keys)];
      if (wanted.length === 0) return [];
      // The key is the `_id`. FerretDB pushes an equality on it down to its index and filters an
      // `$in` in Go over the user's records: a few keys (a live removal names one or a handful)
      // are read one by one, a catch-up's many in one query on the user's index.
      const found =
        wanted.length <= KEYS_READ_ONE_BY_ONE
          ? (
              await Promise.all(wanted.map((key) => records.findOne({ _id: key, ...live(userId, now) })))
            ).filter((doc) => doc !== null)
          : await records.find({ ...live(userId, now), _id: { $in: wanted } }).toArray();
      return found.map(toInboxRecord);
    },
  };
}
