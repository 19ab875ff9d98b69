import type { AnyBulkWriteOperation, Db } from 'mongodb';
import { MAX_BULK_OPERATIONS } from './coalesced-writes.ts';

/**
 * Deletes documents by `_id`, a thousand single-document `deleteMany`s per unordered bulk: FerretDB
 * filters an `$in` in Go over the whole collection, and hangs on a bulk of many single-document
 * writes that each hold a cursor (docs/storage.md), while it pushes each `{_id}` down. Idempotent.
 * Returns how many this call deleted: of two calls at once on the same ids, each document counts
 * in only one.
 */
export async function deleteByIds(db: Db, name: string, ids: readonly string[]): Promise<number> {
  let deleted = 0;
  for (let start = 0; start < ids.length; start += MAX_BULK_OPERATIONS) {
    const operations: AnyBulkWriteOperation<{ _id: string }>[] = ids
      .slice(start, start + MAX_BULK_OPERATIONS)
      .map((_id) => ({ deleteMany: { filter: { _id } } }));
    deleted += (await db.collection<{ _id: string }>(name).bulkWrite(operations, { ordered: false }))
      .deletedCount;
  }
  return deleted;
}
