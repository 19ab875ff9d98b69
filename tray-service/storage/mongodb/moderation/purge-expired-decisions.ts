import type { Db } from 'mongodb';
import type { ModerationDecisionDoc } from '../../../domain/decision-doc.ts';
import { MODERATION_DECISIONS } from '../collections/collection-names.ts';
import { giveDecisionsExpiry } from './migrate-decision-expiry.ts';

/** Decisions deleted per round: short deletes, as the PostgreSQL adapter's batches. */
export const PURGE_DECISIONS_BATCH = 1_000;

/**
 * Deletes the moderation decisions expired at `now` (their event's expiry, copied when saved),
 * oldest expiry first, a batch at a time along the `expiry` index, until none is left; returns how
 * many went. A decision still `pending` delivery stays until it is delivered or given up: a retry
 * may be hours away, and the delivery reads the decision it sends. The delete repeats the
 * conditions, so a decision whose expiry a save moved on since the read stays. Decisions saved
 * without an expiry (by a worker of before it, in a rolling upgrade) get theirs first.
 */
export async function purgeExpiredDecisions(
  db: Db,
  now: Date,
  batch = PURGE_DECISIONS_BATCH,
): Promise<number> {
  const decisions = db.collection<Pick<ModerationDecisionDoc, 'expiresAt' | 'delivery'> & { _id: string }>(
    MODERATION_DECISIONS,
  );
  await giveDecisionsExpiry(db);
  const expired = { expiresAt: { $lte: now }, delivery: { $ne: 'pending' as const } };
  let purged = 0;
  // One walk of the index, deleting behind it a batch at a time: a query per batch began again at
  // the oldest expiry, so every batch walked past every decision left pending (kept for good when
  // delivery stopped with a backlog) first.
  const found = decisions.find(expired, { projection: { _id: 1 }, batchSize: batch }).sort({ expiresAt: 1 });
  let ids: string[] = [];
  const purge = async () => {
    if (ids.length > 0)
      purged += (await decisions.deleteMany({ _id: { $in: ids }, ...expired })).deletedCount;
    ids = [];
  };
  try {
    for await (const doc of found) {
      ids.push(doc._id);
      if (ids.length >= batch) await purge();
    }
    await purge();
  } finally {
    await found.close();
  }
  return purged;
}
