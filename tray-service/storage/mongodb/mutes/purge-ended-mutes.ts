import type { Db } from 'mongodb';
import { TRAY_MUTES, TRAY_RECORDS } from '../collection-names.ts';
import type { MuteDoc } from './tray-mutes-collection.ts';

/** Expired spans read per round. */
export const PURGE_MUTES_BATCH = 1_000;

/** When a span ended: its `until` or its removal, whichever came first (an expired span has one). */
const endOf = (span: Pick<MuteDoc, 'until' | 'removedAt'>) =>
  Math.min(span.until ?? Infinity, span.removedAt ?? Infinity);

/**
 * The latest expiry among the owner's records that count from before `end` (by `userId`, the lead
 * of the records' history indexes); undefined when there is none. A record counts actions from its
 * countFrom on, and only while it lives.
 */
async function recordsJudgedUntil(db: Db, userId: string, end: number): Promise<Date | undefined> {
  const [latest] = await db
    .collection<{ expiresAt: Date }>(TRAY_RECORDS)
    .find({ userId, countFrom: { $lt: end } }, { projection: { _id: 0, expiresAt: 1 } })
    .sort({ expiresAt: -1 })
    .limit(1)
    .toArray();
  return latest?.expiresAt;
}

/**
 * The purge of ended mute spans (docs/storage.md#kept-actions-live-as-long-as-their-records),
 * which no TTL index expires: a span past its own expiry (its end plus the retention) still holds
 * back what it covered whenever a record of its owner is computed again, so it goes only once none
 * of the owner's records that count from before its end lives; else it moves to the latest expiry
 * among those, and no later round (nor the next purge) reads it again until then. Ended spans
 * never change again (a PUT starts a new span, a DELETE ends only the one in force), so the move
 * races no writer. Returns how many spans went.
 */
export async function purgeEndedMutes(db: Db, now: Date, batch = PURGE_MUTES_BATCH): Promise<number> {
  let purged = 0;
  const expired = { expiresAt: { $lte: now } };
  const mutes = db.collection<MuteDoc>(TRAY_MUTES);
  for (;;) {
    const found = await mutes
      .find(expired, { projection: { _id: 1, userId: 1, until: 1, removedAt: 1 }, limit: batch })
      .toArray();
    for (const span of found) {
      const keptUntil = await recordsJudgedUntil(db, span.userId, endOf(span));
      if (keptUntil === undefined || keptUntil <= now)
        purged += (await mutes.deleteOne({ _id: span._id, ...expired })).deletedCount;
      else await mutes.updateOne({ _id: span._id, ...expired }, { $set: { expiresAt: keptUntil } });
    }
    if (found.length < batch) return purged;
  }
}
