import type { AnyBulkWriteOperation, Db, Filter } from 'mongodb';
import type { PageKey } from '../../../domain/page-cursor.ts';
import type { ModerationDecisionDoc } from '../../../domain/decision-doc.ts';
import { EVENTS, MODERATION_DECISIONS } from '../collections/collection-names.ts';
import { outcomesByEvent } from '../../../domain/event-moderation.ts';
import { afterKeyQuery } from '../events/after-key-query.ts';
import { onlyDuplicateKeys } from '../driver/is-duplicate-key.ts';
import type { EventDoc } from '../collections/events-collection.ts';
import type { DecisionsFilter, DecisionsPort } from '../../port.ts';
import { storableJson } from '../../../domain/storable-json.ts';
import { CONSOLE_READ_MAX_TIME_MS } from '../driver/console-read-time-limit.ts';

const newestFirst = { decidedAt: -1, _id: -1 } as const;

/** As stored: the decision's id is the document's _id (unique without an index of its own). */
type DecisionDocument = Omit<ModerationDecisionDoc, 'id'> & { _id: string };

function toDecision({ _id, ...rest }: DecisionDocument): ModerationDecisionDoc {
  return { id: _id, ...rest };
}

export function decisionsQuery(filter: DecisionsFilter, after?: PageKey): Filter<DecisionDocument> {
  const query: Record<string, unknown> = {};
  for (const field of ['rule', 'action', 'userId', 'eventKey', 'eventReceivedAt', 'delivery'] as const) {
    if (filter[field] !== undefined) query[field] = filter[field];
  }
  const decidedAt: Record<string, Date> = {};
  if (filter.since) decidedAt.$gte = filter.since;
  if (filter.until) decidedAt.$lt = filter.until;
  if (Object.keys(decidedAt).length > 0) query.decidedAt = decidedAt;
  return (after ? { $and: [query, afterKeyQuery('decidedAt', after)] } : query) as Filter<DecisionDocument>;
}

/**
 * The storage port's moderation decisions on MongoDB: moderation_decisions, one document per
 * (event, rule, subject), the decision id as `_id`.
 */
export function createMongoDecisions(db: Db): DecisionsPort {
  const decisions = db.collection<DecisionDocument>(MODERATION_DECISIONS);
  return {
    /**
     * Inserts decisions not stored yet (an existing one is left as it is, but for a later expiry;
     * one expired is new: its event, expired too, was stored anew) and marks their events' outcome.
     */
    async saveAll(handed: readonly ModerationDecisionDoc[]): Promise<void> {
      if (handed.length === 0) return;
      // Texts from the event or a rule, as the event itself is stored (U+0000 fails FerretDB's
      // statement, on every attempt); the event keys then match the stored events' `_id`s.
      const docs = storableJson(handed);
      // An expired one whose event was stored anew (a later expiry: a redelivery after the
      // retention, a replay) is new, as if the purge had removed it: replaced whole, in one step (a
      // delivery reading it meanwhile finds one or the other). One statement each, an equality
      // FerretDB pushes down (decisions are few).
      for (const { id, ...rest } of docs)
        await decisions.replaceOne(
          { _id: id, expiresAt: { $lte: rest.decidedAt, $lt: rest.expiresAt } },
          rest,
        );
      const ops: AnyBulkWriteOperation<DecisionDocument>[] = docs.map(({ id, ...rest }) => ({
        updateOne: { filter: { _id: id }, update: { $setOnInsert: rest }, upsert: true },
      }));
      try {
        await decisions.bulkWrite(ops, { ordered: false });
      } catch (error) {
        // Two workers upserting the same new decision at once: one insert loses the race on _id,
        // and the decision is stored either way.
        if (!onlyDuplicateKeys(error)) throw error;
      }
      // A decision saved again whose event was stored anew (a redelivery of an expired one) lives
      // as long as the event. Only those with an earlier expiry are written: FerretDB's updates
      // rewrite the whole document, and one written for nothing could undo a delivery's mark.
      const byExpiry = new Map<number, string[]>();
      for (const doc of docs)
        byExpiry.set(doc.expiresAt.getTime(), [...(byExpiry.get(doc.expiresAt.getTime()) ?? []), doc.id]);
      for (const [expiry, ids] of byExpiry) {
        const expiresAt = new Date(expiry);
        await decisions.updateMany(
          { _id: { $in: ids }, expiresAt: { $lt: expiresAt } },
          { $set: { expiresAt } },
        );
      }
      // Then each decided event's outcome, which only grows more severe: a flag never replaces a
      // ban request, so saving decisions again leaves it as it is. Single-document updateManys
      // (FerretDB hangs on bulks of matching updateOnes).
      const outcomes: AnyBulkWriteOperation<EventDoc>[] = [...outcomesByEvent(docs)].map(([key, action]) => ({
        updateMany: {
          filter: action === 'ban-request' ? { _id: key } : { _id: key, moderation: { $ne: 'ban-request' } },
          update: { $set: { moderation: action } },
        },
      }));
      await db.collection<EventDoc>(EVENTS).bulkWrite(outcomes, { ordered: false });
    },

    /** Of these ids, those still waiting for delivery (to re-enqueue after a crash between save and enqueue). */
    async pendingAmong(ids: readonly string[]): Promise<string[]> {
      const docs = await decisions
        .find({ _id: { $in: [...ids] }, delivery: 'pending' }, { projection: { _id: 1 } })
        .toArray();
      return docs.map((doc) => doc._id);
    },

    async get(id: string): Promise<ModerationDecisionDoc | undefined> {
      const doc = await decisions.findOne({ _id: id });
      return doc ? toDecision(doc) : undefined;
    },

    async list(filter: DecisionsFilter, limit: number, after?: PageKey) {
      const docs = await decisions
        .find(decisionsQuery(filter, after), { maxTimeMS: CONSOLE_READ_MAX_TIME_MS })
        .sort(newestFirst)
        .limit(limit + 1)
        .toArray();
      const items = docs.slice(0, limit).map(toDecision);
      const last = items.at(-1);
      return docs.length > limit && last ? { items, next: { at: last.decidedAt, id: last.id } } : { items };
    },

    async markDelivered(id: string, attempts: number, at: Date): Promise<void> {
      await decisions.updateOne(
        { _id: id },
        {
          $set: { delivery: 'delivered', deliveryAttempts: attempts, deliveredAt: at },
          $unset: { lastError: '' },
        },
      );
    },

    /** Records a failed attempt; `final` when no retry is left. Never overrides a delivery that succeeded. */
    async markAttemptFailed(id: string, attempts: number, error: string, final: boolean): Promise<void> {
      await decisions.updateOne(
        { _id: id, delivery: { $ne: 'delivered' } },
        {
          $set: {
            deliveryAttempts: attempts,
            lastError: error.slice(0, 500),
            ...(final ? { delivery: 'failed' } : {}),
          },
        },
      );
    },
  };
}
