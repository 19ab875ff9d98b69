import type { ModerationAction } from './moderation-action.ts';

/**
 * `unknown`: a name the mapping does not know; `invalid`: known name, payload failed validation;
 * `foreign`: from a webhook that is not the platform's (platform-webhooks.ts), never mapped nor
 * applied, and never applied by a replay either: the verdict is stored with the event.
 */
export const storedEventStatuses = ['applied', 'stored', 'unknown', 'invalid', 'foreign'] as const;
export type StoredEventStatus = (typeof storedEventStatuses)[number];

/**
 * Verdicts under which nothing of an event was applied. A replay whose mapping judges the event
 * otherwise (a name it has learned since, a check it has mended) stores its verdict in their place;
 * `applied` stays (the tray holds what was applied then), and `foreign` is never mapped.
 */
export const RESTATABLE_STATUSES: readonly StoredEventStatus[] = ['stored', 'unknown', 'invalid'];

/** A verified delivery as stored for moderation and analytics (the admin API reads it). */
export interface StoredEvent {
  /** The receiver's dedupe key (lowercase hex SHA-256 of the raw body). */
  key: string;
  event: string;
  data: Record<string, unknown>;
  webhook: string;
  receivedAt: Date;
  storedAt: Date;
  /**
   * When storage drops it: receivedAt + the EVENTS_RETENTION_DAYS in force when it was stored, or
   * as long after its storing when that had passed (event-expiry.ts). Set once, so a later change
   * of the retention does not move it; reads and the purge go by it.
   */
  expiresAt: Date;
  status: StoredEventStatus;
  error?: string;
  /** The user who acted (the mapping's EventSubject), when the event names exactly one. */
  userId?: string;
  /** The community the event happened in, when it names one. */
  communityId?: string;
  /** The most severe action of the moderation decisions about this event; absent when none. */
  moderation?: ModerationAction;
  /** When a job first finished it: applied to the tray and moderated (the lag charts measure from receivedAt). */
  appliedAt?: Date;
}
