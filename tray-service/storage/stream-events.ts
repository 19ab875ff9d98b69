import type { PageKey } from '../domain/page-cursor.ts';
import type { StoredEvent } from '../domain/stored-event.ts';
import type { EventsFilter, EventsPage } from './port.ts';

/** Events per page of streamEvents: bounded memory, few round trips. */
export const STREAM_BATCH = 500;

/**
 * Payload bytes per page of streamEvents at most (one event at least): 500 payloads of a megabyte
 * (WEBHOOK_MAX_BODY_BYTES allows up to 64) would otherwise be held at once, by each export and
 * replay running. About three times as much JavaScript heap while a page is held.
 */
export const STREAM_PAGE_BYTES = 16 * 1024 * 1024;

/**
 * Every event of `filter`, newest first (after `from`, when given), as keyset pages of `list` (EventsPort.stream, on both
 * engines). Each page is one short query, so a slow consumer (an export's reader, a replay that
 * applies every event) holds no connection, snapshot or server cursor between pages: PostgreSQL
 * would keep the snapshot's old row versions from being cleaned up, and MongoDB closes a cursor
 * left idle for 10 minutes, which failed a long replay part-way.
 */
export async function* streamEvents(
  list: (
    filter: EventsFilter,
    limit: number,
    after?: PageKey,
    options?: { maxBytes?: number },
  ) => Promise<EventsPage>,
  filter: EventsFilter,
  from?: PageKey,
): AsyncGenerator<StoredEvent> {
  let after = from;
  do {
    const page = await list(filter, STREAM_BATCH, after, { maxBytes: STREAM_PAGE_BYTES });
    yield* page.items;
    after = page.next;
  } while (after);
}
