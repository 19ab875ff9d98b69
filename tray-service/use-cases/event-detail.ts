import type { ModerationDecisionDoc } from '../domain/decision-doc.ts';
import type { MappedEvent } from '../domain/activity.ts';
import { mapEvent } from '../domain/map-event.ts';
import type { StoredEvent } from '../domain/stored-event.ts';
import type { DecisionsPort, EventsPort } from '../storage/port.ts';
import type { EventRecipients, RecipientsSummary } from './event-recipients.ts';

/** Recipients listed with an event; the rest are paged (GET /admin/events/:key/recipients). */
export const FIRST_RECIPIENTS = 50;
/** Decisions listed with an event: rules decide once per subject, so an event has few. */
const DECISIONS_SHOWN = 100;

export interface EventDetail {
  event: StoredEvent;
  /** What the mapping makes of the stored payload today (the pure mapping, docs/tray-engine.md). */
  mapped: MappedEvent;
  recipients: RecipientsSummary;
  decisions: ModerationDecisionDoc[];
}

/** One stored event as the events console shows it: the event, its mapping, recipients, decisions. */
export function createEventDetail(deps: {
  events: Pick<EventsPort, 'get'>;
  decisions: Pick<DecisionsPort, 'list'>;
  recipients: EventRecipients;
}) {
  return async (key: string): Promise<EventDetail | undefined> => {
    const event = await deps.events.get(key);
    if (!event) return undefined;
    const [recipients, decisions] = await Promise.all([
      deps.recipients.summary(event, FIRST_RECIPIENTS),
      deps.decisions.list({ eventKey: key }, DECISIONS_SHOWN),
    ]);
    const mapped = mapEvent({ event: event.event, data: event.data, receivedAt: event.receivedAt.getTime() });
    return { event, mapped, recipients, decisions: decisions.items };
  };
}
