import type { RecordPosition } from '../domain/page-cursor.ts';
import type { RemovalOutcome, RemovalTrayChange } from '../domain/removal-tray-change.ts';
import type { RemovalOutcomesPort } from '../storage/port.ts';

/** Changes listed with an event; the rest are paged (GET /admin/events/:key/tray-changes). */
export const FIRST_TRAY_CHANGES = 50;

export interface RemovalChangesPage {
  items: RemovalTrayChange[];
  next?: RecordPosition;
}

/** What a removal event changed: its counts and the first listed changes. */
export interface RemovalChangesSummary extends RemovalOutcome, RemovalChangesPage {}

export interface RemovalChanges {
  /** Undefined when nothing was recorded for the event (not applied yet, or by an older version). */
  summary(eventKey: string): Promise<RemovalChangesSummary | undefined>;
  page(eventKey: string, limit: number, after?: RecordPosition): Promise<RemovalChangesPage>;
}

/**
 * Which trays a removal event changed, as the worker recorded when it applied it (docs/operations.md#what-a-removal-changed).
 * Without the port (an admin app wired without it) none is shown: every summary is undefined,
 * every page empty.
 */
export function createRemovalChanges(port: RemovalOutcomesPort | undefined): RemovalChanges {
  return {
    async summary(eventKey) {
      if (!port) return undefined;
      const [outcome, first] = await Promise.all([
        port.outcome(eventKey),
        port.changes(eventKey, FIRST_TRAY_CHANGES),
      ]);
      return outcome && { ...outcome, ...first };
    },
    page: async (eventKey, limit, after) => (port ? port.changes(eventKey, limit, after) : { items: [] }),
  };
}
