/** `unknown`: a name the mapping does not know; `invalid`: known name, payload failed validation. */
export const storedEventStatuses = ['applied', 'stored', 'unknown', 'invalid'] as const;
export type StoredEventStatus = (typeof storedEventStatuses)[number];

/** A verified delivery as stored for moderation and analytics (the admin API reads it). */
export interface StoredEvent {
  /** The receiver's dedupe key (lowercase hex SHA-256 of the raw body). */
  key: string;
  event: string;
  data: Record<string, unknown>;
  webhook: string;
  receivedAt: Date;
  storedAt: Date;
  status: StoredEventStatus;
  error?: string;
}
