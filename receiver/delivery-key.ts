import { hash, randomUUID } from 'node:crypto';
import { dedupeKey } from './dedupe-key.ts';

/**
 * Events whose body names no time of their own when `data.createdAt` is absent, so that a real
 * repeat is byte for byte an earlier delivery: a rejoin repeats the first join, and a profile
 * changed back (Ana, Ana B, Ana) repeats the first update.
 */
const UNDATED_EVENTS = new Set(['community.didJoin', 'community.didLeave', 'user.didUpdate']);
const UNDATED_NAMES = [...UNDATED_EVENTS].map((name) => Buffer.from(`"${name}"`));

/**
 * The key a delivery is queued under: its dedupe key (the SHA-256 of the body), except for a join,
 * a leave or a profile update without `data.createdAt`. Such a body names no time, so a real
 * rejoin repeats the first join byte for byte, and dedupe by body would drop it for
 * WEBHOOK_DEDUPE_SECONDS and leave the member out of the community
 * (docs/tray-engine.md#membership-by-time); a profile changed back would leave the tray with the
 * name in between. Those get a key of their own per delivery: every one is queued and counts from
 * its receipt. So does a platform's retry of one: the same effect when nothing came between, but
 * a retried join after the member's leave makes them a member again (docs/contract.md).
 *
 * Only `data.createdAt` counts, as the tray reads it (null or absent: the time of receipt): a
 * `createdAt` elsewhere in the body (a user's or the community's, as other events' objects carry
 * them) is the same in the repeat. Every other event costs three byte searches of the raw body, no
 * parsing (the hot path); a body that quotes one of those event names, the rare joins, leaves and
 * profile updates, is parsed. One that is not JSON is keyed by its bytes: the envelope check
 * refuses it anyway.
 */
export function deliveryKey(rawBody: Buffer, unique: () => string = randomUUID): string {
  if (!UNDATED_NAMES.some((name) => rawBody.includes(name)) || !isUndated(rawBody)) {
    return dedupeKey(rawBody);
  }
  return hash('sha256', Buffer.concat([rawBody, Buffer.from(`\n${unique()}`)]), 'hex');
}

/** A join, leave or profile update whose `data` has no `createdAt` (or null). */
function isUndated(rawBody: Buffer): boolean {
  let body: unknown;
  try {
    // A leading byte order mark is allowed, as the envelope check allows it.
    body = JSON.parse(rawBody.toString('utf8').replace(/^\uFEFF/, ''));
  } catch {
    return false;
  }
  if (typeof body !== 'object' || body === null) return false;
  const { event, data } = body as { event?: unknown; data?: unknown };
  if (typeof event !== 'string' || !UNDATED_EVENTS.has(event)) return false;
  if (typeof data !== 'object' || data === null) return false;
  return (data as { createdAt?: unknown }).createdAt == null;
}
