import type { AnyBulkWriteOperation, Db } from 'mongodb';
import { TRAY_RECORDS } from '../collections/collection-names.ts';
import { UPDATES_PER_BULK } from '../compare-and-set/cas-update-records.ts';
import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';
import { runOnce } from '../setup/run-once.ts';
import { preInboxState } from './with-inbox-state.ts';

export const INBOX_STATE = 'record-inbox-state';

/** A record as versions before the inbox stored it: no seen flag, archive, snooze or box. */
export type PreInboxRecordDoc = Omit<TrayRecordDoc, 'isSeen' | 'archivedAt' | 'snoozedUntil' | 'box'>;

/**
 * Gives records written before the inbox their inbox state, once per database: in the inbox, seen
 * when read (docs/tray-rules.md#inbox: what the user has read they have seen). No update pipeline
 * (FerretDB has none) can copy `hasRead` into `isSeen` in place, so records are read with one
 * cursor and rewritten in bulks of single-document updates, each only if its version is still the
 * one read, as migrate-record-shape.ts does. Runs at open, before the worker takes jobs.
 */
export function migrateInboxState(db: Db): Promise<number> {
  return runOnce(db, INBOX_STATE, async () => {
    const records = db.collection<PreInboxRecordDoc>(TRAY_RECORDS);
    const older = records.find(
      { box: { $exists: false } },
      { batchSize: UPDATES_PER_BULK, projection: { _id: 1, version: 1, hasRead: 1 } },
    );
    let migrated = 0;
    let batch: AnyBulkWriteOperation<PreInboxRecordDoc>[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      migrated += (await records.bulkWrite(batch, { ordered: false })).modifiedCount;
      batch = [];
    };
    for await (const record of older) {
      batch.push({
        updateMany: {
          filter: { _id: record._id, version: record.version },
          update: { $set: preInboxState(record.hasRead) },
        },
      });
      if (batch.length >= UPDATES_PER_BULK) await flush();
    }
    await flush();
    return migrated;
  });
}
