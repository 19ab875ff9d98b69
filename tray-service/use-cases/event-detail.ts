import type { ModerationDecisionDoc } from '../domain/decision-doc.ts';
import { judgeStoredEvent, type JudgedEvent } from '../domain/judged-event.ts';
import type { StoredEvent } from '../domain/stored-event.ts';
import type { DecisionsPort, EventsPort } from '../storage/port.ts';
import type { EventRecipients, RecipientsSummary } from './event-recipients.ts';
import type { RemovalChanges, RemovalChangesSummary } from './removal-changes.ts';

/** Recipients listed with an event; the rest are paged (GET /admin/events/:key/recipients). */
export const FIRST_RECIPIENTS = 50;
/** Decisions listed with an event: rules decide once per subject, so an event has few. */
const DECISIONS_SHOWN = 100;

export interface EventDetail {
  event: StoredEvent;
  /**
   * What the mapping makes of the stored payload today (the pure mapping, docs/tray-engine.md);
   * nothing for a `foreign` event, which no tray ever takes.
   */
  mapped: JudgedEvent;
  recipients: RecipientsSummary;
  decisions: ModerationDecisionDoc[];
  /**
   * A removal event's effect on the trays, as recorded when applied; null when nothing was
   * recorded (not applied yet, or by a version that did not record it). Absent for other events.
   */
  trayChanges?: RemovalChangesSummary | null;
}

/** One stored event as the events console shows it: the event, its mapping, recipients, decisions. */
export function createEventDetail(deps: {
  events: Pick<EventsPort, 'get'>;
  decisions: Pick<DecisionsPort, 'list'>;
  recipients: EventRecipients;
  removalChanges?: RemovalChanges;
}) {
  return async (key: string): Promise<EventDetail | undefined> => {
    const event = await deps.events.get(key);
    if (!event) return undefined;
    const mapped = judgeStoredEvent(event);
    const removal = (mapped.removals?.length ?? 0) > 0 && deps.removalChanges;
    const [recipients, decisions, trayChanges] = await Promise.all([
      deps.recipients.summary(event, FIRST_RECIPIENTS),
      // This delivery's only: an expired one's decisions wait for the purge (docs/operations.md).
      deps.decisions.list({ eventKey: key, eventReceivedAt: event.receivedAt }, DECISIONS_SHOWN),
      removal ? removal.summary(key) : undefined,
    ]);
    return {
      event,
      mapped,
      recipients,
      decisions: decisions.items,
      ...(removal ? { trayChanges: trayChanges ?? null } : {}),
    };
  };
}
