import { calendarDayExists } from '../domain/iso-date-time.ts';

/**
 * An ISO 8601 date or date-time such as 2026-11-20 or 2026-11-20T10:00:00Z, with each field in its
 * range. The OpenAPI document publishes this same pattern, so the fuzzer's "valid" times are valid
 * here too; ASCII digits are spelled out because other regex dialects read `\d` more widely.
 */
const date = '([0-9]{4})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])';
const time = '((?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\\.[0-9]{1,9})?)?)';
const offset = '(Z|[+-](?:[01][0-9]|2[0-3]):?[0-5][0-9])';
export const isoTimePattern = new RegExp(`^${date}(?:[T ]${time}${offset}?)?$`);

/**
 * An admin filter time (since/until), or undefined when it is not one. Stricter than `new Date()`:
 * - the calendar day must exist: `new Date('2026-02-30')` silently rolls over to March 2, which
 *   would move the bound two days without the caller knowing;
 * - a time without an offset is UTC, as a date alone is: ECMAScript reads `2026-11-20T10:00` as the
 *   server's local time, so the answer would depend on the machine's time zone;
 * - a fraction finer than a millisecond is taken up to the next millisecond, not cut.
 */
export function parseIsoTime(value: string): Date | undefined {
  const match = isoTimePattern.exec(value);
  if (!match) return undefined;
  const [, year = '', month = '', day = '', time, offset] = match;
  if (!calendarDayExists(Number(year), Number(month), Number(day))) return undefined;
  const date = new Date(
    time === undefined ? `${year}-${month}-${day}` : `${year}-${month}-${day}T${time}${offset ?? 'Z'}`,
  );
  if (Number.isNaN(date.getTime())) return undefined;
  // Date keeps milliseconds and cuts the rest; stored times are whole milliseconds, so a bound
  // between two is taken up to the next: `since` (inclusive) and `until` (exclusive) both stay
  // right, where cutting it down took in (or left out) the millisecond before it.
  const beyondMs = /\.[0-9]{3}([0-9]*)/.exec(time ?? '')?.[1] ?? '';
  return /[1-9]/.test(beyondMs) ? new Date(date.getTime() + 1) : date;
}
