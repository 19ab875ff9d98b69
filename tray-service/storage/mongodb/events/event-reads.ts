import type { Db, Document, Filter } from 'mongodb';
import { EVENTS } from '../collections/collection-names.ts';
import { type EventDoc, type StoredEventDoc } from '../collections/events-collection.ts';
import { moderationActions } from '../../../domain/moderation-action.ts';
import type { PageKey } from '../../../domain/page-cursor.ts';
import type { EventsFilter, EventsPage } from '../../port.ts';
import { afterKeyQuery } from './after-key-query.ts';
import { storableJson } from '../../../domain/storable-json.ts';
import { CONSOLE_READ_MAX_TIME_MS } from '../driver/console-read-time-limit.ts';

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
  if (filter.userId !== undefined) query.userId = filter.userId;
  if (filter.communityId !== undefined) query.communityId = filter.communityId;
  // Events stored before the events console have no `moderation` field: they had no decision.
  if (filter.moderation === 'none') query.moderation = { $in: ['none', null] };
  else if (filter.moderation === 'any') query.moderation = { $in: [...moderationActions] };
  else if (filter.moderation !== undefined) query.moderation = filter.moderation;
  if (Object.keys(receivedAt).length > 0) query.receivedAt = receivedAt;
  return (after ? { ...query, ...afterKeyQuery('receivedAt', after) } : query) as Filter<StoredEventDoc>;
}

/** `maxTimeMS`: the server's limit on each list and count read (CONSOLE_READ_MAX_TIME_MS). */
export function createEventsQueries(
  db: Db,
  clock: () => Date = () => new Date(),
  maxTimeMS = CONSOLE_READ_MAX_TIME_MS,
) {
  const events = db.collection<EventDoc>(EVENTS);

  /**
   * The first `count` events of a query, newest first, whole (or as `projection` keeps them), in
   * the find's reply (the driver's first batch is 101 documents otherwise): one round trip, and
   * its cursor closed with the reply.
   */
  const firstOf = (query: Filter<StoredEventDoc>, count: number, projection?: Document) =>
    events
      .find(query, projection ? { projection, maxTimeMS } : { maxTimeMS })
      .sort(newestFirst)
      .limit(count)
      .batchSize(count)
      .toArray();

  /**
   * A page of at most `limit` events whose payloads fit in `maxBytes` together (one at least): the
   * page's keys and sizes first, without the payloads, then as many whole documents by the same
   * query (not by `$in`, which FerretDB filters over the whole collection). An event stored without
   * a size (before sizes were kept) counts as none.
   */
  async function boundedPage(
    filter: EventsFilter,
    limit: number,
    now: Date,
    maxBytes: number,
    after?: PageKey,
  ): Promise<Omit<EventsPage, 'items'> & { items: StoredEventDoc[] }> {
    const heads = await firstOf(eventsQuery(filter, now, after), limit + 1, {
      _id: 1,
      receivedAt: 1,
      bytes: 1,
    });
    let taken = 0;
    let bytes = 0;
    for (const head of heads.slice(0, limit)) {
      bytes += head.bytes ?? 0;
      if (taken > 0 && bytes > maxBytes) break;
      taken += 1;
    }
    if (taken === 0) return { items: [] };
    const items = await firstOf(eventsQuery(filter, now, after), taken);
    // An event stored between the two reads inside the page (a queue's backlog) may have taken the
    // last one's place: the page ends at what it holds, and the next page goes on from there.
    const last = items.at(-1);
    const more = heads.length > taken || last?._id !== heads[taken - 1]?._id;
    return more && last ? { items, next: { at: last.receivedAt, id: last._id } } : { items };
  }

  return {
    /** A page as stored (mongo-events.ts hands its items out as StoredEvents). */
    async list(
      filter: EventsFilter,
      limit: number,
      after?: PageKey,
      options?: { maxBytes?: number },
    ): Promise<Omit<EventsPage, 'items'> & { items: StoredEventDoc[] }> {
      const now = clock();
      if (options?.maxBytes !== undefined) return boundedPage(filter, limit, now, options.maxBytes, after);
      // One extra document tells whether another page exists without a count.
      const docs = await firstOf(eventsQuery(filter, now, after), limit + 1);
      const items = docs.slice(0, limit);
      const last = items.at(-1);
      return docs.length > limit && last ? { items, next: { at: last.receivedAt, id: last._id } } : { items };
    },

    async get(key: string): Promise<StoredEventDoc | null> {
      // Keys are stored as storage can hold them (event-document.ts): one asked with U+0000 is
      // looked up as stored, instead of failing the query on FerretDB (a 500, where PostgreSQL's
      // adapter answers not found).
      return events.findOne({ _id: storableJson(key), expiresAt: { $gt: clock() } });
    },

    count(filter: EventsFilter, after?: PageKey, atMost?: number): Promise<number> {
      return events.countDocuments(
        eventsQuery(filter, clock(), after),
        atMost === undefined ? { maxTimeMS } : { limit: atMost, maxTimeMS },
      );
    },
  };
}

export type EventsQueries = ReturnType<typeof createEventsQueries>;
