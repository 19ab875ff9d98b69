import type { AnyBulkWriteOperation, Db } from 'mongodb';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { recordStorageKeys } from './storage-keys.ts';
import { TRAY_RECORDS, TRAY_TARGET_ACTORS, TRAY_MIGRATIONS } from '../collections/collection-names.ts';
import { type TrayRecordDoc } from '../collections/tray-records-collection.ts';
import { UPDATES_PER_BULK } from '../compare-and-set/cas-update-records.ts';
import { ignoreDuplicates } from '../driver/ignore-duplicates.ts';
import type { TargetActorDoc } from '../collections/tray-target-actors-collection.ts';

export const RECORD_SHAPE = 'record-shape-2';

/** A record as versions before the bounded shape stored it: every actor in `actorLog`. */
export interface LegacyRecordDoc extends Omit<
  TrayRecordDoc,
  'countFrom' | 'unreadAt' | 'group' | 'isSeen' | 'archivedAt' | 'snoozedUntil' | 'box'
> {
  actorLog: { userId: string; at: number; actionId: string }[];
}

/**
 * Brings records written by earlier versions to the current shape, once per database: each
 * record's actor log becomes its group's actors (tray_target_actors), and the record gets
 * countFrom, unreadAt (its lastUpdate: the best the old record knows) and group. One
 * pass over the legacy records (a cursor, not a query per batch), and each record is rewritten
 * only if its version is still the one read. The worker runs it before it takes jobs; the API
 * keeps serving meanwhile.
 * Pure computation in `upgradeRecord`.
 */
export async function migrateRecordShape(db: Db, options: { retentionDays: number }): Promise<number> {
  const migrations = db.collection<{ _id: string; at: Date }>(TRAY_MIGRATIONS);
  if (await migrations.findOne({ _id: RECORD_SHAPE })) return 0;
  const legacy = db
    .collection<LegacyRecordDoc>(TRAY_RECORDS)
    .find({ actorLog: { $exists: true } }, { batchSize: UPDATES_PER_BULK });
  let migrated = 0;
  let batch: LegacyRecordDoc[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const upgraded = batch.map((record) => upgradeRecord(record, options.retentionDays));
    const actors = upgraded.flatMap((u) => u.actors);
    if (actors.length > 0)
      await ignoreDuplicates(
        db.collection<TargetActorDoc>(TRAY_TARGET_ACTORS).insertMany(actors, { ordered: false }),
      );
    const ops: AnyBulkWriteOperation<TrayRecordDoc>[] = upgraded.map(({ record, fields }) => ({
      updateMany: {
        filter: { _id: record._id, version: record.version },
        update: { $set: fields, $unset: { actorLog: '' } },
      },
    }));
    migrated += (await db.collection<TrayRecordDoc>(TRAY_RECORDS).bulkWrite(ops, { ordered: false }))
      .modifiedCount;
    batch = [];
  };
  for await (const record of legacy) {
    batch.push(record);
    if (batch.length >= UPDATES_PER_BULK) await flush();
  }
  await flush();
  await ignoreDuplicates(migrations.insertOne({ _id: RECORD_SHAPE, at: new Date() }));
  return migrated;
}

/** The current fields of a legacy record, and its actor log as group actors. Pure. */
export function upgradeRecord(
  record: LegacyRecordDoc,
  retentionDays: number,
): {
  record: LegacyRecordDoc;
  fields: Pick<TrayRecordDoc, 'countFrom' | 'unreadAt' | 'group'>;
  actors: TargetActorDoc[];
} {
  const keys = recordStorageKeys(record);
  const actors = record.actorLog.map((entry): TargetActorDoc => {
    const snapshot = record.actors.find((actor) => actor.userId === entry.userId);
    const { at: _at, ...actor } = snapshot ?? { userId: entry.userId, name: entry.userId, at: entry.at };
    const expiresAt = new Date(entry.at + retentionDays * DAY_MS);
    return {
      _id: JSON.stringify([keys.group, entry.userId, entry.actionId]),
      group: keys.group,
      actor,
      at: entry.at,
      actionId: entry.actionId,
      expiresAt,
    };
  });
  return {
    record,
    fields: {
      countFrom: Math.min(record.lastUpdate, ...record.actorLog.map((entry) => entry.at)),
      unreadAt: record.lastUpdate,
      ...keys,
    },
    actors,
  };
}
