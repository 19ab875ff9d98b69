import type { StoredEvent } from '../domain/stored-event.ts';

/**
 * The pub/sub channel on which workers announce each event once first applied (the events
 * console's live tail). One channel for every event: only admin instances with a tail open
 * subscribe, and a publish nobody listens to costs Redis nothing but the send.
 */
export const storedEventsChannel = (prefix: string): string => `${prefix}:stored-events`;

const times = ['receivedAt', 'storedAt', 'expiresAt', 'appliedAt'] as const;

/** A stored event as it travels on the channel (JSON, its times ISO 8601). */
export function serializeStoredEvent(event: StoredEvent): string {
  return JSON.stringify(event);
}

/** The event a message carries, or undefined for one that is not (another release's, garbage). */
export function parseStoredEvent(message: string): StoredEvent | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const fields = parsed as Record<string, unknown>;
  if (
    typeof fields.key !== 'string' ||
    typeof fields.event !== 'string' ||
    typeof fields.webhook !== 'string'
  )
    return undefined;
  if (typeof fields.data !== 'object' || fields.data === null) return undefined;
  const event = { ...fields } as Record<string, unknown>;
  for (const field of times) {
    if (fields[field] === undefined) continue;
    const at = new Date(String(fields[field]));
    if (Number.isNaN(at.getTime())) return undefined;
    event[field] = at;
  }
  if (
    !(event.receivedAt instanceof Date) ||
    !(event.storedAt instanceof Date) ||
    !(event.expiresAt instanceof Date)
  )
    return undefined;
  return event as unknown as StoredEvent;
}
