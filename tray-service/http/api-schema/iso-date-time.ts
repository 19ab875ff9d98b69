/**
 * A full ISO 8601 date-time with its offset, so the server's time zone never decides. ASCII digits
 * only (no `u` flag: `\d` is [0-9]).
 */
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/**
 * Epoch ms of an ISO 8601 date-time such as 2026-11-28T10:00:00Z or 2026-11-28T11:00+01:00;
 * undefined when it is not written as one, 'invalid' when it names a day or time that does not
 * exist. Date.parse takes 2027-02-31 for 2027-03-03 and T24:00 for the next day's midnight: a
 * caller's mistake would move their time silently. Here every field must read back as written.
 */
export function parseIsoDateTime(value: string): number | 'invalid' | undefined {
  const match = ISO_DATE_TIME.exec(value);
  if (!match) return undefined;
  // The groups the pattern leaves out (seconds, fraction, offset of Z) are 0.
  const field = (index: number) => Number(match[index] ?? 0);
  const [year, month, day, hour, minute, second] = [
    field(1),
    field(2),
    field(3),
    field(4),
    field(5),
    field(6),
  ];
  const ms = Number((match[7] ?? '').padEnd(3, '0'));
  const [offsetHours, offsetMinutes] = [field(9), field(10)];
  if (offsetHours > 23 || offsetMinutes > 59) return 'invalid';
  const written = utcDay(year, month, day);
  written.setUTCHours(hour, minute, second, ms);
  const readsBack =
    readsBackAs(written, year, month, day) &&
    written.getUTCHours() === hour &&
    written.getUTCMinutes() === minute &&
    written.getUTCSeconds() === second;
  if (!readsBack) return 'invalid';
  const offset = (match[8] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  return written.getTime() - offset;
}

/** Midnight UTC of a calendar day; setUTCFullYear, not Date.UTC, which reads a year below 100 as 19xx. */
function utcDay(year: number, month: number, day: number): Date {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date;
}

const readsBackAs = (date: Date, year: number, month: number, day: number) =>
  date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;

/**
 * Whether a calendar day exists (no 30 February): Date rolls a day past the month's end over into
 * the next month, which would move a caller's time silently.
 */
export const calendarDayExists = (year: number, month: number, day: number): boolean =>
  readsBackAs(utcDay(year, month, day), year, month, day);
