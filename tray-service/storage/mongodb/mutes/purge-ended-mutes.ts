import type { Db } from 'mongodb';
import { TRAY_MUTES, TRAY_RECORDS } from '../collection-names.ts';
import { WHOLE_GROUP } from '../compare-and-set/read-by-ids.ts';
import { purgeKeptDocuments } from '../purge-kept-documents.ts';
import type { MuteDoc } from './tray-mutes-collection.ts';

/** When a span ended: its `until` or its removal, whichever came first (an expired span has one). */
const endOf = (span: Pick<MuteDoc, 'until' | 'removedAt'>) =>
  Math.min(span.until ?? Infinity, span.removedAt ?? Infinity);

/**
 * The latest expiry among the owner's records that count from before `end`; undefined when there
 * is none. Read by equality on `userId` (the lead of the records' history indexes), the latest
 * taken here: no index orders a user's records by expiry, and a sort on `expiresAt` would either
 * sort in memory or walk the whole `expiry` index. A record counts actions from its countFrom on,
 * and only while it lives.
 */
async function recordsJudgedUntil(db: Db, userId: string, end: number): Promise<Date | undefined> {
  const records = await db
    .collection<{ countFrom: number; expiresAt: Date }>(TRAY_RECORDS)
    .find({ userId }, { projection: { _id: 0, countFrom: 1, expiresAt: 1 }, batchSize: WHOLE_GROUP })
    .toArray();
  let latest: Date | undefined;
  for (const { countFrom, expiresAt } of records)
    if (countFrom < end && (!latest || expiresAt > latest)) latest = expiresAt;
  return latest;
}

/**
 * The purge of ended mute spans (docs/storage.md#kept-actions-live-as-long-as-their-records),
 * which no TTL index expires: a span past its own expiry (its end plus the retention) still holds
 * back what it covered whenever a record of its owner is computed again, so it goes only once none
 * of the owner's records that count from before its end lives; else it moves to the latest expiry
 * among those (purgeKeptDocuments). Ended spans never change again (a PUT starts a new span, a
 * DELETE ends only the one in force). Returns how many spans went.
 */
export function purgeEndedMutes(db: Db, now: Date): Promise<number> {
  return purgeKeptDocuments<Pick<MuteDoc, '_id' | 'userId' | 'until' | 'removedAt'>>(db, TRAY_MUTES, now, {
    projection: { userId: 1, until: 1, removedAt: 1 },
    keptUntil: (span) => recordsJudgedUntil(db, span.userId, endOf(span)),
  });
}
