import { DAY_MS } from '../../shared/time/durations.ts';

/**
 * When a stored event expires: `retentionDays` after its receipt, or after its storing when the
 * first has passed by then. A job replayed after it had failed for longer than the retention is
 * applied to the trays now; stored expired, it would be neither listed, counted nor marked applied,
 * and purged within the hour, so it is kept as long from now.
 */
export function eventExpiry(receivedAt: Date, storedAt: Date, retentionDays: number): Date {
  const fromReceipt = receivedAt.getTime() + retentionDays * DAY_MS;
  return new Date(
    fromReceipt > storedAt.getTime() ? fromReceipt : storedAt.getTime() + retentionDays * DAY_MS,
  );
}
