import type { StoredEventDoc } from '../../shared/tray/tray-record.ts';

/** What the admin API shows of a stored event: `key` is the receiver's dedupe key. */
export interface EventView {
  key: string;
  event: string;
  webhook: string;
  status: StoredEventDoc['status'];
  error?: string;
  receivedAt: string;
  storedAt: string;
  expiresAt: string;
  data: Record<string, unknown>;
}

export function toEventView(doc: StoredEventDoc): EventView {
  return {
    key: doc._id,
    event: doc.event,
    webhook: doc.webhook,
    status: doc.status,
    ...(doc.error === undefined ? {} : { error: doc.error }),
    receivedAt: doc.receivedAt.toISOString(),
    storedAt: doc.storedAt.toISOString(),
    expiresAt: doc.expiresAt.toISOString(),
    data: doc.data,
  };
}
