import type { Db } from 'mongodb';
import { DAY_MS } from '../../../shared/time/durations.ts';
import { EVENT_LAG_MINUTES, EVENT_MINUTES } from './event-minutes-collection.ts';
import { dayOf } from '../../../shared/tray/storage-keys.ts';
import {
  EVENTS,
  TRAY_RECORD_CLAIMS,
  TRAY_RECORDS,
  TRAY_TARGET_ACTORS,
} from '../../../shared/tray/tray-record.ts';

/** How many past days a purge sweeps: a worker down longer leaves older days to a longer sweep. */
export const PURGE_SWEEP_DAYS = 14;

/**
 * Deletes expired records (90 days after lastUpdate by default), events and their per-minute
 * rollups, group actors and write claims: the portable path next to TTL indexes (FerretDB has none, and MongoDB's TTL monitor
 * runs only once a minute). It deletes whole past days by equality on `expiresDay`, the one kind
 * of filter FerretDB serves from an index, sweeping back `days` days; readers filter
 * `expiresAt > now` too, so an expired record is never returned meanwhile.
 */
export async function purgeExpired(
  db: Db,
  now = new Date(),
  days = PURGE_SWEEP_DAYS,
): Promise<{ records: number; events: number }> {
  const counts = { records: 0, events: 0 };
  for (let back = 1; back <= days; back++) {
    const expiresDay = dayOf(now.getTime() - back * DAY_MS);
    counts.records += (await db.collection(TRAY_RECORDS).deleteMany({ expiresDay })).deletedCount;
    counts.events += (await db.collection(EVENTS).deleteMany({ expiresDay })).deletedCount;
    await db.collection(TRAY_TARGET_ACTORS).deleteMany({ expiresDay });
    await db.collection(TRAY_RECORD_CLAIMS).deleteMany({ expiresDay });
    await db.collection(EVENT_MINUTES).deleteMany({ expiresDay });
    await db.collection(EVENT_LAG_MINUTES).deleteMany({ expiresDay });
  }
  return counts;
}
