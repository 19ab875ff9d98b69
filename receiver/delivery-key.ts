import { hash, randomUUID } from 'node:crypto';
import { dedupeKey } from './dedupe-key.ts';

const MEMBERSHIP_EVENTS = new Set(['community.didJoin', 'community.didLeave']);
const MEMBERSHIP_NAMES = [...MEMBERSHIP_EVENTS].map((name) => Buffer.from(`"${name}"`));

/**
 * The key a delivery is queued under: its dedupe key (the SHA-256 of the body), except for a join
 * or leave without `data.createdAt`. Such a body names no time, so a real rejoin repeats the first
 * join byte for byte, and dedupe by body would drop it for WEBHOOK_DEDUPE_SECONDS and leave the
 * member out of the community (docs/tray-engine.md#membership-by-time). Those get a key of their
 * own per delivery: every one is queued and counts from its receipt.
 *
 * Only `data.createdAt` counts, as the tray reads it (null or absent: the time of receipt): a
 * `createdAt` elsewhere in the body (a user's or the community's, as other events' objects carry
 * them) is the same in the rejoin. Every other event costs two byte searches of the raw body, no
 * parsing (the hot path); a body that quotes a membership event name, the rare joins and leaves,
 * is parsed. One that is not JSON is keyed by its bytes: the envelope check refuses it anyway.
 */
export function deliveryKey(rawBody: Buffer, unique: () => string = randomUUID): string {
  if (!MEMBERSHIP_NAMES.some((name) => rawBody.includes(name)) || !isUndatedMembership(rawBody)) {
    return dedupeKey(rawBody);
  }
  return hash('sha256', Buffer.concat([rawBody, Buffer.from(`\n${unique()}`)]), 'hex');
}

/** A join or leave whose `data` has no `createdAt` (or null). */
function isUndatedMembership(rawBody: Buffer): boolean {
  let body: unknown;
  try {
    // A leading byte order mark is allowed, as the envelope check allows it.
    body = JSON.parse(rawBody.toString('utf8').replace(/^\uFEFF/, ''));
  } catch {
    return false;
  }
  if (typeof body !== 'object' || body === null) return false;
  const { event, data } = body as { event?: unknown; data?: unknown };
  if (typeof event !== 'string' || !MEMBERSHIP_EVENTS.has(event)) return false;
  if (typeof data !== 'object' || data === null) return false;
  return (data as { createdAt?: unknown }).createdAt == null;
}
