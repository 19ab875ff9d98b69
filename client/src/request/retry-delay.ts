/** The first wait when the service names none; doubled on each further attempt. */
const BASE_DELAY_MS = 250;

/** How much later than the plain delay a wait may be, as a fraction of it. */
export const JITTER = 0.2;

/**
 * Milliseconds to wait before attempt `attempt + 1` of a call the service refused with 429 or 503,
 * or undefined when the service asks for a wait longer than `maxMs` (the caller throws instead of
 * waiting). The wait the service named (`namedMs`: its `Retry-After`, retryAfterMs, as the refusal's
 * TrayApiError carries it) wins when present and longer:
 * asking earlier is refused again and costs the caller's budget. Otherwise the wait doubles from
 * 250 ms, up to `maxMs` (a `maxMs` below 250 ms allows no wait at all).
 * Either way a random part is added, so many clients refused at the same moment do not all come
 * back in the same millisecond, but never past `maxMs`.
 */
export function retryDelay(
  attempt: number,
  namedMs: number | undefined,
  random: () => number = Math.random,
  maxMs = Infinity,
): number | undefined {
  // The client's own backoff stops growing at the longest wait: uncapped, it outgrew that wait by
  // the eighth retry and the call was thrown although the service had asked for a second only.
  const backoff = Math.min(BASE_DELAY_MS * 2 ** attempt, Math.max(maxMs, BASE_DELAY_MS));
  // Never shorter than the backoff: a wait of nothing (`Retry-After: 0`, a date past, from a proxy
  // say) would send every retry at once, as the stream's reconnects never are (reconnectWait).
  const plain = Math.max(namedMs ?? 0, backoff);
  // The limit applies to the wait asked for, not to the random part the client adds: compared after
  // it, a wait exactly as long as the limit was refused almost every time.
  if (plain > maxMs) return undefined;
  return Math.min(maxMs, Math.round(plain + plain * JITTER * random()));
}

/**
 * The time of a response by the server's clock: its `Date` header, else `now`. A `Retry-After` date
 * is measured against it: the server wrote both by one clock, and a client whose own clock is an
 * hour off would otherwise wait an hour, or not at all.
 */
export function responseClock(headers: Headers, now: number): number {
  const date = headers.get('Date');
  return (date === null ? undefined : httpDate(date.trim())) ?? now;
}

/** `Retry-After` in milliseconds from `now`, or undefined when absent or not understood. */
export function retryAfterMs(header: string | null, now: number): number | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = httpDate(text);
  return at === undefined ? undefined : Math.max(0, at - now);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * An HTTP date (RFC 9110) as epoch ms. The IMF-fixdate and the obsolete RFC 850 form end in GMT,
 * and Date.parse reads both; other text it might read ("-3") is not a date. The obsolete asctime
 * form names no zone, so Date.parse would take it for local time: it is read here, as UTC.
 */
function httpDate(text: string): number | undefined {
  const asctime =
    /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Z][a-z]{2}) ([ \d]\d) (\d\d):(\d\d):(\d\d) (\d{4})$/.exec(text);
  if (asctime) {
    const [, month = '', day, hours, minutes, seconds, year] = asctime;
    const index = MONTHS.indexOf(month);
    if (index < 0) return undefined;
    return Date.UTC(Number(year), index, Number(day), Number(hours), Number(minutes), Number(seconds));
  }
  if (!text.endsWith('GMT')) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : at;
}
