import type { Db } from 'mongodb';
import type { RecordSnapshot } from '../compare-and-set/cas-update-records.ts';
import { WHOLE_GROUP } from '../driver/whole-group.ts';
import { TRAY_RECORDS } from '../collections/collection-names.ts';
import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';

/** Every recipient's record of one group, by equality on `group` (one index lookup, `record_group`). */
export async function readRecordGroup(db: Db, group: string): Promise<RecordSnapshot> {
  const docs = await db
    .collection<TrayRecordDoc>(TRAY_RECORDS)
    .find({ group }, { batchSize: WHOLE_GROUP })
    .toArray();
  return new Map(docs.map((doc) => [doc._id, doc]));
}
