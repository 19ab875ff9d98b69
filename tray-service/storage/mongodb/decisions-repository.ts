import type { AnyBulkWriteOperation, Db, Filter } from 'mongodb';
import { afterKeyQuery, type PageKey } from '../../domain/page-cursor.ts';
import { MODERATION_DECISIONS, type ModerationDecisionDoc } from '../../domain/decision-doc.ts';
import { EVENTS } from '../../../shared/tray/tray-record.ts';
import { outcomesByEvent } from '../../domain/event-moderation.ts';
import { onlyDuplicateKeys } from './is-duplicate-key.ts';
import type { EventDoc } from './store-event.ts';
import type { DecisionsFilter } from '../port.ts';

export type { DecisionsFilter } from '../port.ts';

const newestFirst = { decidedAt: -1, _id: -1 } as const;

export function decisionsQuery(filter: DecisionsFilter, after?: PageKey): Filter<ModerationDecisionDoc> {
  const query: Record<string, unknown> = {};
  for (const field of ['rule', 'action', 'userId', 'eventKey', 'delivery'] as const) {
    if (filter[field] !== undefined) query[field] = filter[field];
  }
  const decidedAt: Record<string, Date> = {};
  if (filter.since) decidedAt.$gte = filter.since;
  if (filter.until) decidedAt.$lt = filter.until;
  if (Object.keys(decidedAt).length > 0) query.decidedAt = decidedAt;
  return (
    after ? { $and: [query, afterKeyQuery('decidedAt', after)] } : query
  ) as Filter<ModerationDecisionDoc>;
}

/** moderation_decisions: one document per (event, rule, subject). */
export function createDecisionsRepository(db: Db) {
  const decisions = db.collection<ModerationDecisionDoc>(MODERATION_DECISIONS);
  return {
    /** Inserts decisions not stored yet (an existing one is left as it is) and marks their events' outcome. */
    async saveAll(docs: readonly ModerationDecisionDoc[]): Promise<void> {
      if (docs.length === 0) return;
      const ops: AnyBulkWriteOperation<ModerationDecisionDoc>[] = docs.map(({ _id, ...rest }) => ({
        updateOne: { filter: { _id }, update: { $setOnInsert: rest }, upsert: true },
      }));
      try {
        await decisions.bulkWrite(ops, { ordered: false });
      } catch (error) {
        // Two workers upserting the same new decision at once: one insert loses the race on _id,
        // and the decision is stored either way.
        if (!onlyDuplicateKeys(error)) throw error;
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

    get(id: string): Promise<ModerationDecisionDoc | null> {
      return decisions.findOne({ _id: id });
    },

    async list(filter: DecisionsFilter, limit: number, after?: PageKey) {
      const docs = await decisions
        .find(decisionsQuery(filter, after))
        .sort(newestFirst)
        .limit(limit + 1)
        .toArray();
      const items = docs.slice(0, limit);
      const last = items.at(-1);
      return docs.length > limit && last ? { items, next: { at: last.decidedAt, id: last._id } } : { items };
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

export type DecisionsRepository = ReturnType<typeof createDecisionsRepository>;
