/**
 * ISO 8601 date-times as the platform's events and the API's inputs carry them
 * (docs/contract.md#event-catalogue, docs/tray-api.md#the-inbox): the one reader of both, so the
 * tray never takes a time in one place that it refuses in another.
 *
 * Taken: a calendar date and a time of day in the extended (2026-11-28T10:00:00) or basic
 * (20261128T100000) form, seconds optional, a fraction of any length after `.` or `,` (kept to
 * the millisecond: truncated, never rounded into the next second), and then `Z` or an offset
 * written ±hh:mm, ±hhmm or ±hh; senders mix an extended time with a basic offset
 * (2026-11-28T10:00:00+0000, strftime's %z), so the offset's form is free.
 * Refused, each with its own problem:
 * - a time without `Z` or an offset: it names a different instant in every time zone, and reading
 *   it in the server's zone (as ECMAScript does) would move it by the server's setting
 *   (docs/decisions.md);
 * - a date alone: no instant;
 * - a day or time that does not exist (2027-02-31, T24:00, :60 seconds, an offset beyond 23:59):
 *   Date.parse takes 2027-02-31 for 2027-03-03 and T24:00 for the next midnight, which would move
 *   a sender's time silently; here every field must read back as written.
 * ASCII digits only (no `u` flag: `\d` is [0-9]).
 */
const EXTENDED =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(?:(Z)|([+-])(\d{2})(?::?(\d{2}))?)?$/;
const BASIC =
  /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(?:(\d{2})(?:[.,](\d+))?)?(?:(Z)|([+-])(\d{2})(?::?(\d{2}))?)?$/;
const DATE_ALONE = /^\d{4}-?\d{2}-?\d{2}$/;

/** The offsets' forms, as messages and the API's description name them. */
export const ISO_OFFSET_FORMS = 'Z, ±hh:mm, ±hhmm or ±hh';

/** What a time input that also takes epoch ms (the API's `until`) must be. */
export const TIME_INPUT_EXPECTED = `expected an integer time (ms) or an ISO 8601 date-time with its offset (${ISO_OFFSET_FORMS})`;

/** Why a text is not an ISO 8601 date-time the tray takes. */
export type IsoDateTimeProblem = 'not-a-date-time' | 'date-alone' | 'no-offset' | 'does-not-exist';

/** What each problem tells the sender, in the words of the API's and the stored events' errors. */
export const isoDateTimeProblemMessages: Readonly<Record<IsoDateTimeProblem, string>> = {
  'not-a-date-time':
    'expected an ISO 8601 date-time with its offset, such as 2026-11-28T10:00:00Z or 2026-11-28T11:00:00+01:00',
  'date-alone': 'expected a time after the date, with its offset (2026-11-28T10:00:00Z)',
  'no-offset': `expected an offset after the time (${ISO_OFFSET_FORMS}): without one it names a different instant in every time zone`,
  'does-not-exist': 'expected a date and time that exist (no February 30, no hour 24)',
};

/**
 * Epoch ms of an ISO 8601 date-time such as 2026-11-28T10:00:00Z, 2026-11-28T11:00+0100 or
 * 2026-11-28T10:00:00.097000Z, or the problem that keeps it from being one. Pure.
 */
export function parseIsoDateTime(value: string): number | IsoDateTimeProblem {
  const match = EXTENDED.exec(value) ?? BASIC.exec(value);
  if (!match) return DATE_ALONE.test(value) ? 'date-alone' : 'not-a-date-time';
  if (match[8] === undefined && match[9] === undefined) return 'no-offset';
  // The groups the pattern leaves out (seconds, fraction, offset minutes or all of Z's) are 0.
  const field = (index: number) => Number(match[index] ?? 0);
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map(field) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const ms = Number((match[7] ?? '').slice(0, 3).padEnd(3, '0'));
  const [offsetHours, offsetMinutes] = [field(10), field(11)];
  if (offsetHours > 23 || offsetMinutes > 59) return 'does-not-exist';
  const written = utcDay(year, month, day);
  written.setUTCHours(hour, minute, second, ms);
  const readsBack =
    readsBackAs(written, year, month, day) &&
    written.getUTCHours() === hour &&
    written.getUTCMinutes() === minute &&
    written.getUTCSeconds() === second;
  if (!readsBack) return 'does-not-exist';
  const offset = (match[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
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
