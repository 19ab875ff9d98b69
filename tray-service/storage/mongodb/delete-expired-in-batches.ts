import type { Db, Document, Filter } from 'mongodb';

/** Documents deleted per command: short deletes, as the PostgreSQL adapter's batches. */
export const PURGE_BATCH = 1_000;

/**
 * Deletes the documents of `collection` that match `expired`, oldest expiry first, `batch` at a
 * time read from its expiry index and deleted by id, until none is left; returns how many went.
 * The delete repeats `expired`, so a document whose expiry a write moved on since the read stays.
 * One deleteMany of everything expired was one command over a whole backlog (an hour of events at
 * a busy community's rate, more after an outage): on a server without TTL deletes (FerretDB) the
 * only expiry there is.
 */
export async function deleteExpiredInBatches(
  db: Db,
  collection: string,
  expired: Filter<Document>,
  batch = PURGE_BATCH,
): Promise<number> {
  const documents = db.collection(collection);
  let purged = 0;
  for (;;) {
    const ids = (
      await documents
        .find(expired, { projection: { _id: 1 } })
        .sort({ expiresAt: 1 })
        .limit(batch)
        .toArray()
    ).map((doc) => doc._id);
    if (ids.length === 0) return purged;
    purged += (await documents.deleteMany({ _id: { $in: ids }, ...expired })).deletedCount;
    if (ids.length < batch) return purged;
  }
}
