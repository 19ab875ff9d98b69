import type { MappedEvent } from './activity.ts';
import { mapEvent } from './map-event.ts';
import type { StoredEvent, StoredEventStatus } from './stored-event.ts';

/** What the tray makes of an event: the mapping's, or another sender's (FOREIGN). */
export type JudgedEvent = Omit<MappedEvent, 'status'> & { status: StoredEventStatus };

/**
 * Another sender's event, as the tray takes it: stored with its own status and nothing to apply.
 * Not mapped at all, so nothing of what it claims (a subject, a community, a ban) reaches a tray.
 */
export const FOREIGN: JudgedEvent = {
  status: 'foreign',
  activities: [],
  memberships: [],
  profiles: [],
};

/**
 * What the tray makes of a stored event today: nothing of a `foreign` one, whose verdict stands
 * (it is never applied, not by a replay either); the mapping's of any other.
 */
export function judgeStoredEvent(event: StoredEvent): JudgedEvent {
  if (event.status === 'foreign') return FOREIGN;
  return mapEvent({ event: event.event, data: event.data, receivedAt: event.receivedAt.getTime() });
}
