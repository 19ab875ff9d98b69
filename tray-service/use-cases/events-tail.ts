import { eventMatches, type EventsFilter } from '../domain/events-filter.ts';
import type { StoredEvent } from '../domain/stored-event.ts';

/** What a tail is told: each announced event, and the end of the feed (shutdown). */
export interface FeedListener {
  event(event: StoredEvent): void;
  end(): void;
}

/** The events workers announce once first applied (an adapter over pub/sub). */
export interface StoredEventsFeed {
  /** Resolves once the listener will be told of every event announced from now on; call the result to stop. */
  subscribe(listener: FeedListener): Promise<() => void>;
}

/**
 * The live tail (GET /admin/events/tail): the announced events that pass `filter`, as they come.
 * Announced events carry their outcome (status, subject, moderation), so the filter is the list's.
 */
export function tailEvents(
  feed: StoredEventsFeed,
  filter: EventsFilter,
  listener: FeedListener,
): Promise<() => void> {
  return feed.subscribe({
    event: (event) => {
      if (eventMatches(filter, event)) listener.event(event);
    },
    end: () => listener.end(),
  });
}
