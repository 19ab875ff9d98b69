import type { Db } from 'mongodb';
import { TRAY_RECORDS } from '../collections/collection-names.ts';
import { type TrayRecordDoc } from '../collections/tray-records-collection.ts';

/** Keys read as point reads at once; more go by `$in`. */
const POINT_READS = 16;

/** Keys per `$in`: a read of many records (a retry round of a large write) goes in a few queries. */
const IDS_PER_QUERY = 1_000;

/**
 * Reads records by `_id`, on the `_id` index either way: the few keys of a job (its recipients, the
 * common case) as point reads at once, more by `$in`, a thousand keys per query. On MongoDB the
 * two plan alike. The point reads are for FerretDB, the test server: it pushes `{_id}` down but
 * filters an `$in` in Go over the whole collection, which took a third of the conformance suite's
 * model run.
 */
export async function readByIds(db: Db, ids: readonly string[]): Promise<Map<string, TrayRecordDoc>> {
  const records = db.collection<TrayRecordDoc>(TRAY_RECORDS);
  const found = new Map<string, TrayRecordDoc>();
  if (ids.length <= POINT_READS) {
    const docs = await Promise.all(ids.map((_id) => records.findOne({ _id })));
    for (const doc of docs) if (doc) found.set(doc._id, doc);
    return found;
  }
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
