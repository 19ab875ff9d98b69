import type { ModerationFilter } from './event-moderation.ts';
import type { StoredEvent, StoredEventStatus } from './stored-event.ts';

/** The admin filters of the stored events (docs/operations.md#stored-events). */
export interface EventsFilter {
  event?: string;
  webhook?: string;
  status?: StoredEventStatus;
  /** The acting user (StoredEvent.userId). */
  userId?: string;
  communityId?: string;
  /** By the event's moderation decisions (domain/event-moderation.ts). */
  moderation?: ModerationFilter;
  /** Inclusive lower bound on receivedAt. */
  since?: Date;
  /** Exclusive upper bound on receivedAt. */
  until?: Date;
}

/**
 * Whether one event passes the filter: what storage's queries select, said once for a single
 * event (the live tail filters the events the worker announces with it).
 */
export function eventMatches(filter: EventsFilter, event: StoredEvent): boolean {
  if (filter.event !== undefined && event.event !== filter.event) return false;
  if (filter.webhook !== undefined && event.webhook !== filter.webhook) return false;
  if (filter.status !== undefined && event.status !== filter.status) return false;
  if (filter.userId !== undefined && event.userId !== filter.userId) return false;
  if (filter.communityId !== undefined && event.communityId !== filter.communityId) return false;
  if (filter.moderation === 'none' && event.moderation !== undefined) return false;
  if (filter.moderation === 'any' && event.moderation === undefined) return false;
  if (
    filter.moderation !== undefined &&
    filter.moderation !== 'none' &&
    filter.moderation !== 'any' &&
    event.moderation !== filter.moderation
  )
    return false;
  if (filter.since && event.receivedAt < filter.since) return false;
  if (filter.until && event.receivedAt >= filter.until) return false;
  return true;
}
