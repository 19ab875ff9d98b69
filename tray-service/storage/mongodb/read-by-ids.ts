import type { Db } from 'mongodb';
import { TRAY_RECORDS, type TrayRecordDoc } from '../../../shared/tray/tray-record.ts';

/**
 * Batch size of whole-group reads (a fan-out's records, a community's members, a group's actors):
 * one batch as large as the server allows (16 MiB), not a getMore per 101 documents.
 */
export const WHOLE_GROUP = 100_000;

/** Parallel `_id` lookups at a time: enough to overlap round trips without flooding the pool. */
const PARALLEL_READS = 16;

/**
 * Reads records by `_id`, one equality lookup each: FerretDB never pushes `$in` down, so
 * `{_id: {$in: [3 ids]}}` reads the whole collection (92 s at a million records), while each
 * `{_id}` is an index lookup of a millisecond or two. Callers with many keys read a group instead.
 */
export async function readByIds(db: Db, ids: readonly string[]): Promise<Map<string, TrayRecordDoc>> {
  const records = db.collection<TrayRecordDoc>(TRAY_RECORDS);
  const found = new Map<string, TrayRecordDoc>();
  for (let start = 0; start < ids.length; start += PARALLEL_READS) {
    const docs = await Promise.all(
      ids.slice(start, start + PARALLEL_READS).map((_id) => records.findOne({ _id })),
    );
    for (const doc of docs) if (doc) found.set(doc._id, doc);
  }
  return found;
}
