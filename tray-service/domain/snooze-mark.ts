import { DAY_MS } from '../../shared/time/durations.ts';
import { TIME_INPUT_EXPECTED } from './iso-date-time.ts';
import type { InboxChange, MarkableRecord } from './inbox-state.ts';

/** The furthest a snooze may reach: the default retention of records (TRAY_RETENTION_DAYS). */
export const MAX_SNOOZE_DAYS = 90;

/**
 * Why `until` cannot end a snooze put at `now`, or undefined when it can. A snooze reaches at most
 * MAX_SNOOZE_DAYS, and never past the records' retention (`retentionDays`): a record snoozed for
 * longer than records are kept would always expire snoozed, never to come back. Pure.
 */
export function snoozeUntilProblem(until: number, now: number, retentionDays: number): string | undefined {
  if (!Number.isSafeInteger(until)) return `until: ${TIME_INPUT_EXPECTED}`;
  if (until <= now) return 'until: expected a time later than now';
  const days = Math.min(MAX_SNOOZE_DAYS, retentionDays);
  if (until > now + days * DAY_MS)
    return `until: expected at most ${days} ${days === 1 ? 'day' : 'days'} from now${days < MAX_SNOOZE_DAYS ? " (the records' retention)" : ''}`;
  return undefined;
}

/**
 * POST records/snooze: out of the inbox until `until`, out of the archive. Snoozing again to
 * another time moves the end; to the same time changes nothing. Pure.
 */
export function snooze(
  record: Pick<MarkableRecord, 'snoozedUntil' | 'archivedAt'>,
  until: number,
): InboxChange | undefined {
  return record.snoozedUntil === until && record.archivedAt === null
    ? undefined
    : { snoozedUntil: until, archivedAt: null };
}

/**
 * POST records/unsnooze: back in the inbox now, as it was (the user asked for it, so it is not new
 * to them: read and seen flags stay). Pure.
 */
export function unsnooze(record: Pick<MarkableRecord, 'snoozedUntil'>): InboxChange | undefined {
  return record.snoozedUntil === null ? undefined : { snoozedUntil: null };
}

/**
 * The snooze ended (the wake-up took the record at or after its `until`): back in the inbox,
 * unread and unseen, changed at `until` on the tray's clock, so it is unread even after a last-read
 * that came before the wake-up but after the snooze was put. Undefined when the record is not due.
 * Pure.
 */
export function wake(record: Pick<MarkableRecord, 'snoozedUntil'>, now: number): InboxChange | undefined {
  const until = record.snoozedUntil;
  if (until === null || until > now) return undefined;
  return { snoozedUntil: null, hasRead: false, isSeen: false, unreadAt: until };
}
