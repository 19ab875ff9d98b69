import type { Db } from 'mongodb';
import { TRAY_MUTES, TRAY_RECORDS } from '../collections/collection-names.ts';
import { WHOLE_GROUP } from '../driver/whole-group.ts';
import { purgeKeptDocuments } from '../driver/purge-kept-documents.ts';
import type { MuteDoc } from '../collections/tray-mutes-collection.ts';
import { muteEnd } from '../../../domain/mute.ts';
import { partitionPoint } from '../../../../shared/arrays/partition-point.ts';

/**
 * The purge of ended mute spans (docs/storage.md#kept-actions-live-as-long-as-their-records),
 * which no TTL index expires: a span past its own expiry (its end plus the retention) still holds
 * back what it covered whenever a record of its owner is computed again, so it goes only once none
 * of the owner's records that count from before its end lives; else it moves to the latest expiry
 * among those (purgeKeptDocuments). Ended spans never change again (a PUT starts a new span, a
 * DELETE ends only the one in force). Returns how many spans went.
 */
export function purgeEndedMutes(db: Db, now: Date): Promise<number> {
  return purgeKeptDocuments<EndedSpan>(db, TRAY_MUTES, now, {
    projection: { userId: 1, until: 1, removedAt: 1 },
    keptUntil: (spans) => ownersKeep(db, spans),
  });
}

type EndedSpan = Pick<MuteDoc, '_id' | 'userId' | 'until' | 'removedAt'>;

/**
 * Each span's latest expiry among its owner's records that count from before its end, the owner's
 * records read once for all of the round's spans (by `userId`, the records' history indexes): read
 * per span, a user's thousand ended spans read their tray a thousand times in one round.
 */
async function ownersKeep(db: Db, spans: readonly EndedSpan[]): Promise<Map<string, Date | undefined>> {
  const kept = new Map<string, Date | undefined>();
  for (const [userId, owned] of Map.groupBy(spans, (span) => span.userId)) {
    const records = await db
      .collection<{ countFrom: number; expiresAt: Date }>(TRAY_RECORDS)
      .find(
        { userId, countFrom: { $lt: Math.max(...owned.map(muteEnd)) } },
        { projection: { _id: 0, countFrom: 1, expiresAt: 1 }, batchSize: WHOLE_GROUP },
      )
      .toArray();
    // By countFrom, each with the latest expiry of it and every record before it: a span's answer
    // is that of the last record counting from before its end.
    records.sort((a, b) => a.countFrom - b.countFrom);
    const latest: Date[] = [];
    for (const record of records) {
      const before = latest.at(-1);
      latest.push(before && before > record.expiresAt ? before : record.expiresAt);
    }
    for (const span of owned) {
      const end = muteEnd(span);
      kept.set(span._id, latest[partitionPoint(records, (record) => record.countFrom < end) - 1]);
    }
  }
  return kept;
}
