/**
 * Where a record stands in its user's inbox (docs/tray-rules.md#inbox): seen or not, archived,
 * snoozed. Archived and snoozed exclude each other. "In the inbox" is this stored state, not a
 * comparison with the clock: a snooze whose time has come stays snoozed until the wake-up takes it
 * (well inside a second), so counts and pages are exact statements over stored state.
 */
export interface InboxState {
  isSeen: boolean;
  /** Epoch ms on the tray's clock of the archive mark, or null. */
  archivedAt: number | null;
  /** Epoch ms the snooze ends, or null. */
  snoozedUntil: number | null;
}

/** A record as the inbox marks change it: its state and its read fields. */
export interface MarkableRecord extends InboxState {
  hasRead: boolean;
  /** Epoch ms on the tray's clock that the unread count compares with the last-read time. */
  unreadAt: number;
}

/** What a mark changes of a record; undefined when it changes nothing (`updated` counts the rest). */
export type InboxChange = Partial<MarkableRecord>;

/** A new record: unseen, in the inbox. */
export const NEW_INBOX_STATE: InboxState = { isSeen: false, archivedAt: null, snoozedUntil: null };

/** Not archived and not snoozed. */
export function inInbox(state: Pick<InboxState, 'archivedAt' | 'snoozedUntil'>): boolean {
  return state.archivedAt === null && state.snoozedUntil === null;
}

/**
 * An action the record newly counts brings it back like a new message in a mail thread: unseen,
 * out of the archive and the snooze (the caller makes it unread, as before).
 */
export function reopened(): InboxState {
  return { ...NEW_INBOX_STATE };
}
