import type { AnyBulkWriteOperation, Db } from 'mongodb';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import type { ModerationDecisionDoc } from '../../../domain/decision-doc.ts';
import { EVENTS, MODERATION_DECISIONS } from '../collections/collection-names.ts';
import { UPDATES_PER_BULK } from '../compare-and-set/cas-update-records.ts';
import { runOnce } from '../setup/run-once.ts';

export const DECISION_EXPIRY = 'decision-expiry';

/**
 * The expiry of a decision whose event is gone: the receipt plus 30 days, the default
 * EVENTS_RETENTION_DAYS, as PostgreSQL's migration 0012 gives it. Its event was purged, so it has
 * expired, and the decision mostly has too.
 */
const WITHOUT_EVENT_MS = 30 * DAY_MS;

/** A decision as versions before their expiry stored it. */
export type PreExpiryDecisionDoc = Omit<ModerationDecisionDoc, 'id' | 'expiresAt'> & { _id: string };

/**
 * Gives decisions saved before decisions expired their expiry, once per database (giveDecisionsExpiry).
 * Runs at open, before the worker takes jobs; without it they would never be purged.
 */
export function migrateDecisionExpiry(db: Db): Promise<number> {
  return runOnce(db, DECISION_EXPIRY, () => giveDecisionsExpiry(db));
}

/**
 * Gives every decision without an expiry its event's (still stored), or the receipt plus 30 days;
 * returns how many it gave one. Read with one cursor and rewritten in bulks of single-document
 * updates, each only while it still has none, as migrate-inbox-state.ts does. Once at open
 * (migrateDecisionExpiry), and before each purge: a worker of before the expiry still running in
 * a rolling upgrade saves decisions without one after the pass ran.
 */
export async function giveDecisionsExpiry(db: Db): Promise<number> {
  const decisions = db.collection<PreExpiryDecisionDoc & { expiresAt?: Date }>(MODERATION_DECISIONS);
  const events = db.collection<{ _id: string; expiresAt: Date }>(EVENTS);
  const older = decisions.find(
    { expiresAt: { $exists: false } },
    { batchSize: UPDATES_PER_BULK, projection: { _id: 1, eventKey: 1, eventReceivedAt: 1 } },
  );
  let migrated = 0;
  let batch: Pick<PreExpiryDecisionDoc, '_id' | 'eventKey' | 'eventReceivedAt'>[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const stored = await events
      .find(
        { _id: { $in: [...new Set(batch.map((one) => one.eventKey))] } },
        { projection: { expiresAt: 1 } },
      )
      .toArray();
    const expiryOf = new Map(stored.map((event) => [event._id, event.expiresAt]));
    const updates: AnyBulkWriteOperation<PreExpiryDecisionDoc & { expiresAt?: Date }>[] = batch.map(
      (one) => ({
        updateMany: {
          filter: { _id: one._id, expiresAt: { $exists: false } },
          update: {
            $set: {
              expiresAt:
                expiryOf.get(one.eventKey) ?? new Date(one.eventReceivedAt.getTime() + WITHOUT_EVENT_MS),
            },
          },
        },
      }),
    );
    migrated += (await decisions.bulkWrite(updates, { ordered: false })).modifiedCount;
    batch = [];
  };
  for await (const decision of older) {
    batch.push(decision);
    if (batch.length >= UPDATES_PER_BULK) await flush();
  }
  await flush();
  return migrated;
}
