import { DAY_MS } from '../../shared/time/durations.ts';

/**
 * How far past its receipt an event's own date is believed: a platform's clock may run a little
 * ahead of the receiver's. The storage's ordering of memberships already counts on it
 * (PROCESSING_SKEW_MS).
 */
export const FUTURE_TOLERANCE_MS = DAY_MS;

/**
 * The time an action counts from: the date the platform gave it, unless that is more than
 * FUTURE_TOLERANCE_MS after the receiver accepted the delivery. Such a date (a platform clock
 * years ahead, milliseconds sent where seconds were meant) would sort its record first for good,
 * keep it past every expiry, and hold a join or leave back until then; the receipt is the best
 * time known. The same delivery always gets the same time, since its receipt is stored with it.
 */
export function eventTime(at: number, receivedAt: number): number {
  return at > receivedAt + FUTURE_TOLERANCE_MS ? receivedAt : at;
}
