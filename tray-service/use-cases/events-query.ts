import { firstOf } from '../../shared/async/first-of.ts';
import type { PageKey } from '../domain/page-cursor.ts';
import type { StoredEvent } from '../domain/stored-event.ts';
import type { EventsFilter, EventsPage, EventsPort } from '../storage/port.ts';

export type { EventsFilter, EventsPage };

/** The stored events as the admin API and the export tool read them (docs/operations.md). */
export interface EventsQuery {
  /** Newest first, `limit` at most, strictly after `after`. */
  list(filter: EventsFilter, limit: number, after?: PageKey): Promise<EventsPage>;
  get(key: string): Promise<StoredEvent | undefined>;
  /**
   * Every match, newest first, in batches: memory stays bounded however many match. At most
   * `atMost`: a count made before cannot bound it, since events stored since with an earlier
   * receivedAt (a queue's backlog) join the stream.
   */
  export(filter: EventsFilter, atMost?: number): AsyncIterable<StoredEvent>;
  count(filter: EventsFilter): Promise<number>;
}

export function createEventsQuery(events: EventsPort): EventsQuery {
  return {
    list: (filter, limit, after) => events.list(filter, limit, after),
    get: (key) => events.get(key),
    export: (filter, atMost = Number.POSITIVE_INFINITY) => firstOf(events.stream(filter), atMost),
    count: (filter) => events.count(filter),
  };
}
