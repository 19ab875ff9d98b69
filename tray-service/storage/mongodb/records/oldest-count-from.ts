import type { Db } from 'mongodb';
import { TRAY_RECORDS } from '../collections/collection-names.ts';
import { WHOLE_GROUP } from '../driver/whole-group.ts';
import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';

/**
 * The oldest `countFrom` among a user's records, expired ones the purge has not reached included;
 * undefined when the user has none. Read by equality on `userId` (the lead of the records'
 * history indexes), the oldest taken here: no index orders a user's records by countFrom. How far
 * back what judges the actions their records count must stay (membership-intervals.ts
 * pruneCutoff).
 */
export async function oldestCountFrom(db: Db, userId: string): Promise<number | undefined> {
  const records = await db
    .collection<TrayRecordDoc>(TRAY_RECORDS)
    .find({ userId }, { projection: { _id: 0, countFrom: 1 }, batchSize: WHOLE_GROUP })
    .toArray();
  let oldest: number | undefined;
  for (const { countFrom } of records) if (oldest === undefined || countFrom < oldest) oldest = countFrom;
  return oldest;
}
