import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookSecret } from './parse-webhook-secrets.ts';

export type SignatureResult =
  | { readonly ok: true; readonly webhook: string }
  | { readonly ok: false; readonly reason: 'missing' | 'malformed' | 'mismatch' };

/** Base64 of a 32-byte HMAC-SHA256 digest: 43 characters and one `=` of padding. */
const base64Sha256 = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;

/**
 * Checks `x-service-signature`: Base64(HMAC-SHA256(secret, raw body bytes)) (docs/contract.md#signature). The header must be exactly one canonical Base64 digest; it is compared with each
 * secret of each webhook in constant time, and the first webhook with a matching secret is the
 * sender. The search stops at that match: the time taken then only tells which secret matched,
 * which a sender holding a valid signature knows anyway, and a refused request is checked against
 * every secret. Each HMAC is ~17 us of a receiver's ~250 us per request (BENCHMARKS.md).
 */
export function verifySignature(
  rawBody: Buffer,
  header: string | readonly string[] | undefined,
  secrets: readonly WebhookSecret[],
): SignatureResult {
  if (header === undefined || header === '') return { ok: false, reason: 'missing' };
  if (typeof header !== 'string' || !base64Sha256.test(header)) return { ok: false, reason: 'malformed' };
  const given = Buffer.from(header, 'base64');
  if (given.length !== 32) return { ok: false, reason: 'malformed' };
  for (const secret of secrets) {
    for (const key of secret.keys) {
      const expected = createHmac('sha256', key).update(rawBody).digest();
      if (timingSafeEqual(expected, given)) return { ok: true, webhook: secret.name };
    }
  }
  return { ok: false, reason: 'mismatch' };
}
