import type { AnyBulkWriteOperation, Db } from 'mongodb';
import { idWithinLimit } from '../../../domain/event-id.ts';
import { mostSevere } from '../../../domain/event-moderation.ts';
import { mapEvent } from '../../../domain/map-event.ts';
import type { ModerationAction } from '../../../domain/moderation-action.ts';
import type { ModerationDecisionDoc } from '../../../domain/decision-doc.ts';
import { EVENT_MINUTES, EVENTS, MODERATION_DECISIONS } from '../collections/collection-names.ts';
import { insertCoalesced, MAX_BULK_OPERATIONS } from '../driver/coalesced-writes.ts';
import { eventMinuteId, minuteOf, type EventMinuteDoc } from './event-rollups.ts';
import type { EventDoc } from '../collections/events-collection.ts';
import { payloadOf } from './escaped-keys.ts';
import { runOnce } from '../setup/run-once.ts';

export const EVENTS_CONSOLE = 'events-console';

/** An event as releases before the events console stored it: no `moderation` field. */
const OLDER = { moderation: { $exists: false } } as const;

/** What this migration reads of an older event. */
type OlderEvent = Pick<EventDoc, '_id' | 'event' | 'data' | 'keysEscaped' | 'receivedAt' | 'expiresAt'>;

/**
 * Gives the events stored before the events console what its filters and chart read, once per
 * database, as PostgreSQL's migration 0014 gives them: the moderation outcome of the decisions
 * about that delivery (the most severe), the acting user and community the mapping gives its
 * payload (domain/map-event.ts; an id longer than an event may carry left out, as at store), and
 * their minutes' counts. Without it they read as undecided, escape ?userId= and ?communityId=,
 * and are missing from the chart. Expired events are left as they are: no reader sees them.
 * Runs at open, before the worker takes jobs, after migrate-decision-expiry.ts.
 *
 * The counts first, in one read of those events (event name, receipt, expiry) and inserts: a
 * minute's count of a name is inserted whole, never added to, so an instance starting at the
 * same time, or a start-up after one that stopped half-way, inserts the same documents and its
 * duplicates are ignored. A (minute, name) that already has a count (events both before and after
 * the upgrade) keeps it. Then the fields, with one cursor and bulks of single-document updates,
 * each only while the event still has no `moderation`, as migrate-inbox-state.ts does.
 */
export function migrateEventsConsole(db: Db, now = new Date()): Promise<number> {
  return runOnce(db, EVENTS_CONSOLE, async () => {
    const events = db.collection<EventDoc>(EVENTS);
    const unexpiredOlder = { ...OLDER, expiresAt: { $gt: now } };

    const minutes = new Map<string, EventMinuteDoc>();
    const counted = events.find(unexpiredOlder, {
      batchSize: MAX_BULK_OPERATIONS,
      projection: { _id: 0, event: 1, receivedAt: 1, expiresAt: 1 },
    });
    for await (const event of counted) {
      const minute = minuteOf(event.receivedAt);
      const _id = eventMinuteId(minute, event.event);
      const doc = minutes.get(_id);
      if (!doc) minutes.set(_id, { _id, minute, event: event.event, count: 1, expiresAt: event.expiresAt });
      else {
        doc.count += 1;
        // Kept while any of its events is.
        if (event.expiresAt > doc.expiresAt) doc.expiresAt = event.expiresAt;
      }
    }
    const docs = [...minutes.values()];
    for (let start = 0; start < docs.length; start += MAX_BULK_OPERATIONS)
      await insertCoalesced<EventMinuteDoc>(
        db,
        EVENT_MINUTES,
        docs.slice(start, start + MAX_BULK_OPERATIONS),
      );

    const decisions =
      db.collection<Pick<ModerationDecisionDoc, 'eventKey' | 'eventReceivedAt' | 'action'>>(
        MODERATION_DECISIONS,
      );
    let migrated = 0;
    let batch: OlderEvent[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const receivedAt = new Map(batch.map((event) => [event._id, event.receivedAt.getTime()]));
      const outcomes = new Map<string, ModerationAction>();
      const decided = decisions.find(
        { eventKey: { $in: [...receivedAt.keys()] } },
        { projection: { _id: 0, eventKey: 1, eventReceivedAt: 1, action: 1 } },
      );
      for await (const decision of decided) {
        // Only decisions about this delivery: a key stored again after its first delivery expired
        // keeps the earlier one's decisions until the purge.
        if (decision.eventReceivedAt.getTime() !== receivedAt.get(decision.eventKey)) continue;
        outcomes.set(
          decision.eventKey,
          mostSevere(outcomes.get(decision.eventKey), decision.action) ?? decision.action,
        );
      }
      const updates: AnyBulkWriteOperation<EventDoc>[] = batch.map((event) => {
        const { subject } = mapEvent({
          event: event.event,
          data: payloadOf(event),
          receivedAt: event.receivedAt.getTime(),
        });
        const userId = idWithinLimit(subject?.userId);
        const communityId = idWithinLimit(subject?.communityId);
        return {
          updateMany: {
            filter: { _id: event._id, ...OLDER },
            update: {
              $set: {
                moderation: outcomes.get(event._id) ?? 'none',
                ...(userId === undefined ? {} : { userId }),
                ...(communityId === undefined ? {} : { communityId }),
              },
            },
          },
        };
      });
      migrated += (await events.bulkWrite(updates, { ordered: false })).modifiedCount;
      batch = [];
    };
    const older = events.find(unexpiredOlder, {
      batchSize: MAX_BULK_OPERATIONS,
      projection: { _id: 1, event: 1, data: 1, keysEscaped: 1, receivedAt: 1, expiresAt: 1 },
    });
    for await (const event of older) {
      batch.push(event);
      if (batch.length >= MAX_BULK_OPERATIONS) await flush();
    }
    await flush();
    return migrated;
  });
}
