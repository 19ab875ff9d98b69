import { hash, randomUUID } from 'node:crypto';
import { dedupeKey } from './dedupe-key.ts';

const CREATED_AT = Buffer.from('"createdAt"');
const MEMBERSHIP_EVENTS = [Buffer.from('"community.didJoin"'), Buffer.from('"community.didLeave"')];

/**
 * The key a delivery is queued under: its dedupe key (the SHA-256 of the body), except for a join
 * or leave without `createdAt`. Such a body names no time, so a real rejoin repeats the first
 * join byte for byte, and dedupe by body would drop it for WEBHOOK_DEDUPE_SECONDS and leave the
 * member out of the community (docs/tray-engine.md#membership-by-time). Those get a
 * key of their own per delivery: every one is queued and counts from its receipt. Decided on the
 * raw bytes without parsing (the hot path): a body with `"createdAt"` anywhere, which is every
 * other event of the catalogue, costs one byte search; the rare false match (a membership event
 * name quoted inside another event that has no createdAt) only loses that event's dedupe.
 */
export function deliveryKey(rawBody: Buffer, unique: () => string = randomUUID): string {
  if (rawBody.includes(CREATED_AT) || !MEMBERSHIP_EVENTS.some((name) => rawBody.includes(name))) {
    return dedupeKey(rawBody);
  }
  return hash('sha256', Buffer.concat([rawBody, Buffer.from(`\n${unique()}`)]), 'hex');
}
