import type { StoredEventStatus } from '../../../tray-service/domain/stored-event.ts';
import type { TrayStorage } from '../../../tray-service/storage/port.ts';

export interface StoredEventsRead {
  /** Key and status of every stored event, as listed (newest first). */
  readonly events: readonly { readonly key: string; readonly status: StoredEventStatus }[];
  /** What the storage counts, from its own count query: beyond the distinct keys means a duplicate. */
  readonly counted: number;
}

/**
 * Every stored event through the storage port (read in batches, so 100,000 events stay cheap),
 * and the port's own count of them: the ledger's "stored exactly once" compares the two with the
 * distinct keys.
 */
export async function readStoredEvents(storage: TrayStorage): Promise<StoredEventsRead> {
  const counted = await storage.events.count({});
  const events: { key: string; status: StoredEventStatus }[] = [];
  for await (const event of storage.events.stream({})) events.push({ key: event.key, status: event.status });
  return { events, counted };
}
