import type { Db } from 'mongodb';

/** Expired documents read per round. */
export const PURGE_KEPT_DOCUMENTS_BATCH = 1_000;

/**
 * The purge of documents kept past their own expiry while something still needs them (mute spans,
 * tombstones: docs/storage.md#kept-actions-live-as-long-as-their-records), which no TTL index
 * expires. Reads `batch` expired documents at a time (the `expiry` index) with `projection`; each
 * goes when `keptUntil` finds nothing needing it any more (undefined or past), else moves to that
 * time, so no later round (nor the next purge) reads it again until then. Such documents never
 * change once expired, so the move races no writer. Returns how many went.
 */
export async function purgeKeptDocuments<T extends { _id: string }>(
  db: Db,
  name: string,
  now: Date,
  options: {
    projection: Record<string, 1>;
    /** Each of a round's documents' answer, by `_id`: documents may share what they read (oneByOne). */
    keptUntil: (docs: readonly T[]) => Promise<ReadonlyMap<string, Date | undefined>>;
    batch?: number;
  },
): Promise<number> {
  const batch = options.batch ?? PURGE_KEPT_DOCUMENTS_BATCH;
  const expired = { expiresAt: { $lte: now } };
  // Typed by what the purge itself reads and writes; the caller's fields come from `projection`.
  const collection = db.collection<{ _id: string; expiresAt: Date }>(name);
  let purged = 0;
  for (;;) {
    const found = await collection
      .find<T>(expired, { projection: { ...options.projection, _id: 1 }, limit: batch })
      .toArray();
    const kept = await options.keptUntil(found);
    for (const doc of found) {
      const keptUntil = kept.get(doc._id);
      if (keptUntil === undefined || keptUntil <= now)
        purged += (await collection.deleteOne({ _id: doc._id, ...expired })).deletedCount;
      else await collection.updateOne({ _id: doc._id, ...expired }, { $set: { expiresAt: keptUntil } });
    }
    if (found.length < batch) return purged;
  }
}

/** purgeKeptDocuments' `keptUntil` from a document's own answer, read one document at a time. */
export function oneByOne<T extends { _id: string }>(
  keptUntil: (doc: T) => Promise<Date | undefined>,
): (docs: readonly T[]) => Promise<Map<string, Date | undefined>> {
  return async (docs) => {
    const kept = new Map<string, Date | undefined>();
    for (const doc of docs) kept.set(doc._id, await keptUntil(doc));
    return kept;
  };
}
