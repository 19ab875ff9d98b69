import { DAY_MS } from '../../shared/time/durations.ts';
import type { StoredEvent } from '../domain/stored-event.ts';

/** What the admin API shows of a stored event: `key` is the receiver's dedupe key. */
export interface EventView {
  key: string;
  event: string;
  webhook: string;
  status: StoredEvent['status'];
  error?: string;
  receivedAt: string;
  storedAt: string;
  expiresAt: string;
  data: Record<string, unknown>;
}

/** `retentionDays`: EVENTS_RETENTION_DAYS, what an event's expiry is counted from its receipt with. */
export function toEventView(event: StoredEvent, retentionDays: number): EventView {
  return {
    key: event.key,
    event: event.event,
    webhook: event.webhook,
    status: event.status,
    ...(event.error === undefined ? {} : { error: event.error }),
    receivedAt: event.receivedAt.toISOString(),
    storedAt: event.storedAt.toISOString(),
    expiresAt: new Date(event.receivedAt.getTime() + retentionDays * DAY_MS).toISOString(),
    data: event.data,
  };
}
