import type { Db } from 'mongodb';
import { TRAY_MUTES, TRAY_RECORDS } from '../collections/collection-names.ts';
import { latestExpiry } from '../driver/latest-expiry.ts';
import { purgeKeptDocuments } from '../driver/purge-kept-documents.ts';
import type { MuteDoc } from '../collections/tray-mutes-collection.ts';
import { muteEnd } from '../../../domain/mute.ts';

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
    // The owner's records that count from before its end (by `userId`, the records' history indexes).
    keptUntil: (span) =>
      latestExpiry(db, TRAY_RECORDS, { userId: span.userId, countFrom: { $lt: muteEnd(span) } }),
  });
}
