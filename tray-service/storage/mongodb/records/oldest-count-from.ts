import type { Db } from 'mongodb';
import { TRAY_RECORDS } from '../collection-names.ts';
import type { TrayRecordDoc } from './tray-records-collection.ts';

/**
 * The oldest `countFrom` among a user's records, expired ones the purge has not reached included
 * (by `userId`, the lead of the records' history indexes); undefined when the user has none. How
 * far back what judges the actions their records count must stay (membership-intervals.ts
 * pruneCutoff).
 */
export async function oldestCountFrom(db: Db, userId: string): Promise<number | undefined> {
  const [oldest] = await db
    .collection<TrayRecordDoc>(TRAY_RECORDS)
    .find({ userId }, { projection: { _id: 0, countFrom: 1 } })
    .sort({ countFrom: 1 })
    .limit(1)
    .toArray();
  return oldest?.countFrom;
}
