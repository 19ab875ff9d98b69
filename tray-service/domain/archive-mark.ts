import type { InboxChange, MarkableRecord } from './inbox-state.ts';

/**
 * POST records/archive at `now`: out of the inbox, out of a snooze (states exclude each other).
 * An archived record keeps its first `archivedAt`: archiving it again changes nothing. Pure.
 */
export function archive(record: Pick<MarkableRecord, 'archivedAt'>, now: number): InboxChange | undefined {
  return record.archivedAt === null ? { archivedAt: now, snoozedUntil: null } : undefined;
}

/** POST records/unarchive: back in the inbox as it was (read and seen flags unchanged). Pure. */
export function unarchive(record: Pick<MarkableRecord, 'archivedAt'>): InboxChange | undefined {
  return record.archivedAt === null ? undefined : { archivedAt: null };
}
