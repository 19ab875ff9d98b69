/**
 * A `Retry-After` header (delay-seconds or an HTTP date,
 * https://httpwg.org/specs/rfc9110.html#field.retry-after) as ms from `now`; undefined when
 * absent or unreadable.
 */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(header)) return Number(header) * 1_000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
