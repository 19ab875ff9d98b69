import type { Db, Document, Filter } from 'mongodb';
import type { ModerationDecisionDoc } from '../../../domain/decision-doc.ts';
import { MODERATION_DECISIONS } from '../collections/collection-names.ts';
import { deleteExpiredInBatches, PURGE_BATCH } from '../delete-expired-in-batches.ts';
import { giveDecisionsExpiry } from './migrate-decision-expiry.ts';

/** Decisions deleted per round: short deletes, as the PostgreSQL adapter's batches. */
export const PURGE_DECISIONS_BATCH = PURGE_BATCH;

/**
 * Deletes the moderation decisions expired at `now` (their event's expiry, copied when saved),
 * oldest expiry first, a batch at a time from the `expiry` index, until none is left; returns how
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
  await giveDecisionsExpiry(db);
  const pending: ModerationDecisionDoc['delivery'] = 'pending';
  const expired: Filter<Document> = { expiresAt: { $lte: now }, delivery: { $ne: pending } };
  return deleteExpiredInBatches(db, MODERATION_DECISIONS, expired, batch);
}
