import type { Db } from 'mongodb';
import { EVENTS } from '../collection-names.ts';
import { type StoredEventDoc, type EventDoc } from './events-collection.ts';
import type { StoredEvent } from '../../../domain/stored-event.ts';
import type { EventsPort } from '../../port.ts';
import { insertCoalesced } from '../compare-and-set/coalesced-writes.ts';
import { createEventRollups } from './event-rollups.ts';
import { createEventsQueries } from './event-reads.ts';
import { eventDocument } from './event-document.ts';
import { payloadOf } from './escaped-keys.ts';

/** Documents per batch of a stream: memory stays bounded however many events match. */
const STREAM_BATCH = 500;

/** A stored event as the admin API sees it: the dedupe key as `key`, none of the storage fields. */
export function toStoredEvent(doc: StoredEventDoc | EventDoc): StoredEvent {
  const extra: Partial<EventDoc> = doc;
  return {
    key: doc._id,
    event: doc.event,
    data: payloadOf(doc),
    webhook: doc.webhook,
    receivedAt: doc.receivedAt,
    storedAt: doc.storedAt,
    expiresAt: doc.expiresAt,
    status: doc.status,
    ...(doc.error === undefined ? {} : { error: doc.error }),
    ...(extra.userId === undefined ? {} : { userId: extra.userId }),
    ...(extra.communityId === undefined ? {} : { communityId: extra.communityId }),
    ...(extra.moderation === undefined || extra.moderation === 'none'
      ? {}
      : { moderation: extra.moderation }),
    ...(extra.appliedAt === undefined ? {} : { appliedAt: extra.appliedAt }),
  };
}

/** The storage port's events on MongoDB (`events`, the dedupe key as `_id`), with their per-minute rollups. */
export function createMongoEvents(db: Db, clock: () => Date = () => new Date()): EventsPort {
  const queries = createEventsQueries(db, clock);
  const rollups = createEventRollups(db, clock);
  const events = db.collection<EventDoc>(EVENTS);
  return {
    async store(event, outcome, options) {
      const doc = eventDocument(event, outcome, options.retentionDays, options.now);
      // An insert, not an upsert (FerretDB runs an upsert as a read and then a write): a duplicate
      // key says the event is stored already, and the first stored version is the one returned.
      const [duplicate] = await insertCoalesced<EventDoc>(db, EVENTS, [doc]);
      if (duplicate === undefined) {
        // Counted only by the call that inserted it: a redelivery counts nothing.
        await rollups.countStored(doc);
        return toStoredEvent(doc);
      }
      const held = await events.findOne({ _id: doc._id });
      // Gone between the two (the purge took it expired): the job's retry stores it anew.
      if (!held) throw new Error(`stored event ${doc._id} vanished while it was being stored`);
      if (held.expiresAt <= options.now) {
        // Expired, not yet purged: it counts as gone, and this delivery replaces it (as PostgreSQL's
        // upsert does), only while it is still expired, so of two replacing it at once one does.
        const replaced = await events.replaceOne({ _id: doc._id, expiresAt: { $lte: options.now } }, doc);
        if (replaced.matchedCount === 1) {
          await rollups.countStored(doc);
          return toStoredEvent(doc);
        }
        const current = await events.findOne({ _id: doc._id });
        if (!current) throw new Error(`stored event ${doc._id} vanished while it was being stored`);
        return toStoredEvent(current);
      }
      return toStoredEvent(held);
    },
    async list(filter, limit, after) {
      const page = await queries.list(filter, limit, after);
      return { items: page.items.map(toStoredEvent), ...(page.next ? { next: page.next } : {}) };
    },
    async get(key) {
      const doc = await queries.get(key);
      return doc ? toStoredEvent(doc) : undefined;
    },
    async *stream(filter) {
      const cursor = queries.openCursor(filter, STREAM_BATCH);
      try {
        for await (const doc of cursor) yield toStoredEvent(doc);
      } finally {
        await cursor.close();
      }
    },
    count: (filter) => queries.count(filter),
    async markApplied(event, appliedAt) {
      // Only the first mark matches (`appliedAt` absent), so only it counts into the histogram.
      // No projection: FerretDB 1.24's findAndModify refuses one.
      const before = await events.findOneAndUpdate(
        { _id: event.key, appliedAt: { $exists: false }, expiresAt: { $gt: appliedAt } },
        { $set: { appliedAt } },
      );
      if (!before) return false;
      await rollups.countApplied(before, appliedAt);
      return true;
    },
    perMinute: (since, until) => rollups.perMinute(since, until),
    lagPerMinute: (since, until) => rollups.lagPerMinute(since, until),
  };
}
