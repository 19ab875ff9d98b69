import type { Db } from 'mongodb';
import { TRAY_RECORDS, type TrayRecordDoc } from '../../../shared/tray/tray-record.ts';

/**
 * Batch size of whole-group reads (a fan-out's records, a community's members, a group's actors):
 * one batch as large as the server allows (16 MiB), not a getMore per 101 documents.
 */
export const WHOLE_GROUP = 100_000;

/** Keys per `$in`: a read of many records (a retry round of a large write) goes in a few queries. */
const IDS_PER_QUERY = 1_000;

/** Reads records by `_id` (`$in` on the `_id` index), a thousand keys per query. */
export async function readByIds(db: Db, ids: readonly string[]): Promise<Map<string, TrayRecordDoc>> {
  const records = db.collection<TrayRecordDoc>(TRAY_RECORDS);
  const found = new Map<string, TrayRecordDoc>();
  for (let start = 0; start < ids.length; start += IDS_PER_QUERY) {
    const wanted = ids.slice(start, start + IDS_PER_QUERY);
    // The limit closes the cursor with its one batch: no getMore to learn that nothing follows.
    const docs = await records
      .find({ _id: { $in: wanted } }, { limit: wanted.length, batchSize: wanted.length })
      .toArray();
    for (const doc of docs) found.set(doc._id, doc);
  }
  return found;
}
