import { inInbox, type InboxState } from './inbox-state.ts';

/** The four views of a tray's history (docs/tray-rules.md#inbox). */
export const inboxViews = ['inbox', 'archived', 'snoozed', 'all'] as const;
export type InboxView = (typeof inboxViews)[number];

/** Whether a record in this state is listed by the view. Pure. */
export function inView(state: Pick<InboxState, 'archivedAt' | 'snoozedUntil'>, view: InboxView): boolean {
  switch (view) {
    case 'inbox':
      return inInbox(state);
    case 'archived':
      return state.archivedAt !== null;
    case 'snoozed':
      return state.snoozedUntil !== null;
    case 'all':
      return true;
  }
}
