import type { Db } from 'mongodb';
import { EVENTS, TRAY_RECORD_CLAIMS, TRAY_RECORDS } from '../../shared/tray/tray-record.ts';

/**
 * Deletes expired records (platform document 2.3.5: 90 days after lastUpdate) and events. The
 * portable path next to TTL indexes: FerretDB has none, and MongoDB's TTL monitor runs only once a
 * minute. Readers filter `expiresAt > now` too, so an expired record is never returned meanwhile.
 */
export async function purgeExpired(db: Db, now = new Date()): Promise<{ records: number; events: number }> {
  const records = await db.collection(TRAY_RECORDS).deleteMany({ expiresAt: { $lte: now } });
  const events = await db.collection(EVENTS).deleteMany({ expiresAt: { $lte: now } });
  await db.collection(TRAY_RECORD_CLAIMS).deleteMany({ expiresAt: { $lte: now } });
  return { records: records.deletedCount, events: events.deletedCount };
}
