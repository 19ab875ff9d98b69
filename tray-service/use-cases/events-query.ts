import type { PageKey } from '../domain/page-cursor.ts';
import type { StoredEvent } from '../domain/stored-event.ts';
import type { EventsFilter, EventsPage, EventsPort } from '../storage/port.ts';
import { ExportOverflowError } from './export-overflow-error.ts';

export type { EventsFilter, EventsPage };

/** The stored events as the admin API and the export tool read them (docs/operations.md). */
export interface EventsQuery {
  /**
   * Newest first, strictly after `after`: `limit` at most, and no more than their payloads fit in
   * the page bytes (one at least), so a page of large payloads is not `limit` times their size.
   */
  list(filter: EventsFilter, limit: number, after?: PageKey): Promise<EventsPage>;
  get(key: string): Promise<StoredEvent | undefined>;
  /**
   * Every match, newest first, in batches: memory stays bounded however many match. A match past
   * `atMost` throws ExportOverflowError: a count made before cannot bound the export, since events
   * stored since with an earlier receivedAt (a queue's backlog) join the stream, and stopping
   * quietly at the bound would look like the whole export. From `after` on, when given: an export
   * resumed after the last event it sent.
   */
  export(filter: EventsFilter, atMost?: number, after?: PageKey): AsyncIterable<StoredEvent>;
  /** The matches (after `after`, when given: what a resumed export would send now), up to `atMost`. */
  count(filter: EventsFilter, after?: PageKey, atMost?: number): Promise<number>;
}

/** `pageBytes`: the most payload bytes a page of `list` holds (one event at least); none: no bound. */
export function createEventsQuery(events: EventsPort, pageBytes?: number): EventsQuery {
  return {
    list: (filter, limit, after) =>
      events.list(filter, limit, after, pageBytes === undefined ? {} : { maxBytes: pageBytes }),
    get: (key) => events.get(key),
    export: (filter, atMost = Number.POSITIVE_INFINITY, after) =>
      atMostOrThrow(events.stream(filter, after), atMost),
    count: (filter, after, atMost) => events.count(filter, after, atMost),
  };
}

/** The items of `items`, throwing ExportOverflowError at the first past `atMost`. */
async function* atMostOrThrow<T>(items: AsyncIterable<T>, atMost: number): AsyncGenerator<T> {
  let taken = 0;
  for await (const item of items) {
    if (taken >= atMost) throw new ExportOverflowError(atMost);
    yield item;
    taken += 1;
  }
}
