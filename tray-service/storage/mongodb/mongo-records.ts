import type { Db } from 'mongodb';
import { TRAY_RECORDS } from './collection-names.ts';
import { type TrayRecordDoc } from './tray-record-doc.ts';
import { recordKey } from '../../domain/activity.ts';
import type { TrayRecord } from '../../domain/tray-record.ts';
import type { LatestTimesPort, TrayRecordsPort } from '../port.ts';
import { casUpdateRecords } from './cas-update-records.ts';
import { apiWriter, createRecordQueries, isRecordOf, markReadCompute } from './record-queries.ts';
import { toTrayRecord } from './to-tray-record.ts';

/**
 * The storage port's tray records on MongoDB: the reads and deletes of createRecordQueries, and
 * marking read through the same compare-and-set as the worker's writes, each call collecting the
 * records it changed. Every record leaves in the reader's shape (toTrayRecord).
 */
export function createMongoRecords(
  db: Db,
  options: {
    /** The users' last-read times, for countUnread(userId, 'recorded', now). */
    lastRead: Pick<LatestTimesPort, 'latest'>;
  },
): TrayRecordsPort {
  const queries = createRecordQueries(db);
  const records = db.collection<TrayRecordDoc>(TRAY_RECORDS);

  /** Marks `found` read at `now`; returns the records this call changed, as stored. */
  const markFound = async (found: readonly TrayRecordDoc[], now: number): Promise<TrayRecord[]> => {
    const changed: TrayRecord[] = [];
    await casUpdateRecords(
      db,
      found.map((record) => record._id),
      markReadCompute,
      {
        ...apiWriter(),
        // changedAt on the caller's clock, like every write of the port.
        now: () => now,
        first: new Map(found.map((record) => [record._id, record])),
        onWritten: async (docs) => void changed.push(...docs.map(toTrayRecord)),
      },
    );
    return changed;
  };

  return {
    async countUnread(userId, lastReadAt, now) {
      // No MongoDB command reads two collections at once: the last-read time first, then the count.
      const since = lastReadAt === 'recorded' ? await options.lastRead.latest(userId) : lastReadAt;
      return queries.countUnread(userId, since, now);
    },
    count: queries.count,
    async pageAfter(userId, startAfter, pageSize, now) {
      const page = await queries.pageAfter(userId, startAfter, pageSize, now);
      return { records: page.records.map(toTrayRecord), nextPage: page.nextPage };
    },
    async pageNumber(userId, page, pageSize, now, excludeVerbs) {
      return (await queries.pageNumber(userId, page, pageSize, now, excludeVerbs)).map(toTrayRecord);
    },
    async markRead(userId, verb, targetId, now) {
      // The caller's id as well as the key (record-queries.ts markRead).
      const found = await records.findOne({ _id: recordKey(verb, targetId, userId), userId });
      if (!found || !isRecordOf(found, userId, verb, targetId) || found.expiresAt.getTime() <= now)
        return { found: false, changed: [] };
      return { found: true, changed: await markFound([found], now) };
    },
    async markAllRead(userId, now) {
      const unread = await records.find({ userId, hasRead: false }).toArray();
      return markFound(
        unread.filter((record) => record.expiresAt.getTime() > now),
        now,
      );
    },
    deleteAll: queries.deleteAll,
    async changedSince(userId, since, now) {
      return (await queries.changedSince(userId, since, now)).map(toTrayRecord);
    },
  };
}
