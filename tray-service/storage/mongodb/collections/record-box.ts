import type { InboxState } from '../../../domain/inbox-state.ts';
import type { InboxView } from '../../../domain/inbox-view.ts';

/**
 * Where a record stands, stored beside its inbox state as one field, so each view and both counts
 * are an equality on it and a compound index serves them (docs/storage.md#the-inbox): `inbox`
 * unless archived or snoozed. It is the stored "in the inbox" state, with the two ways out named:
 * the wake-up and new activity set it back to `inbox`, and nothing compares with the clock.
 */
export type RecordBox = 'inbox' | 'archived' | 'snoozed';

/** The box of a record in this state (archived and snoozed exclude each other). Pure. */
export function recordBox(state: Pick<InboxState, 'archivedAt' | 'snoozedUntil'>): RecordBox {
  if (state.archivedAt !== null) return 'archived';
  if (state.snoozedUntil !== null) return 'snoozed';
  return 'inbox';
}

/** The box a view lists, or undefined for `all`. Pure. */
export function viewBox(view: InboxView): RecordBox | undefined {
  return view === 'all' ? undefined : view === 'inbox' ? 'inbox' : view;
}
