import type { Db, Filter, FindCursor } from 'mongodb';
import { EVENTS, type StoredEventDoc } from '../../../shared/tray/tray-record.ts';
import type { PageKey } from '../../domain/page-cursor.ts';
import { afterKeyQuery } from './after-key-query.ts';

/** The admin filters of GET /admin/events and its export (docs/operations.md). */
export interface EventsFilter {
  event?: string;
  webhook?: string;
  status?: StoredEventDoc['status'];
  /** Inclusive lower bound on receivedAt. */
  since?: Date;
  /** Exclusive upper bound on receivedAt. */
  until?: Date;
}

/** Newest first; _id breaks ties between events received in the same millisecond. */
const newestFirst = { receivedAt: -1, _id: -1 } as const;

/** Pure: the MongoDB filter for `filter`, never matching expired events. */
export function eventsQuery(filter: EventsFilter, now: Date, after?: PageKey): Filter<StoredEventDoc> {
  const receivedAt: Record<string, Date> = {};
  if (filter.since) receivedAt.$gte = filter.since;
  if (filter.until) receivedAt.$lt = filter.until;
  const query: Record<string, unknown> = { expiresAt: { $gt: now } };
  if (filter.event !== undefined) query.event = filter.event;
  if (filter.webhook !== undefined) query.webhook = filter.webhook;
  if (filter.status !== undefined) query.status = filter.status;
  if (Object.keys(receivedAt).length > 0) query.receivedAt = receivedAt;
  return (after ? { ...query, ...afterKeyQuery('receivedAt', after) } : query) as Filter<StoredEventDoc>;
}

export interface EventsPage {
  items: StoredEventDoc[];
  /** Key of the last item when more may follow. */
  next?: PageKey;
}

export function createEventsQueries(db: Db, clock: () => Date = () => new Date()) {
  const events = db.collection<StoredEventDoc>(EVENTS);
  return {
    async list(filter: EventsFilter, limit: number, after?: PageKey): Promise<EventsPage> {
      // One extra document tells whether another page exists without a count.
      const docs = await events
        .find(eventsQuery(filter, clock(), after))
        .sort(newestFirst)
        .limit(limit + 1)
        .toArray();
      const items = docs.slice(0, limit);
      const last = items.at(-1);
      return docs.length > limit && last ? { items, next: { at: last.receivedAt, id: last._id } } : { items };
    },

    async get(key: string): Promise<StoredEventDoc | null> {
      return events.findOne({ _id: key, expiresAt: { $gt: clock() } });
    },

    /** A server-side cursor read batch by batch: memory stays bounded however many events match. */
    openCursor(filter: EventsFilter, batchSize = 500): FindCursor<StoredEventDoc> {
      return events.find(eventsQuery(filter, clock())).sort(newestFirst).batchSize(batchSize);
    },

    count(filter: EventsFilter): Promise<number> {
      return events.countDocuments(eventsQuery(filter, clock()));
    },
  };
}

export type EventsQueries = ReturnType<typeof createEventsQueries>;
