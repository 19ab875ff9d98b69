import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookSecret } from './parse-webhook-secrets.ts';

export type SignatureResult =
  | { readonly ok: true; readonly webhook: string }
  | { readonly ok: false; readonly reason: 'missing' | 'malformed' | 'mismatch' };

/** Base64 of a 32-byte HMAC-SHA256 digest: 43 characters and one `=` of padding. */
const base64Sha256 = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;

/**
 * Checks `x-service-signature`: Base64(HMAC-SHA256(secret, raw body bytes)) (platform document,
 * section 5.8). The header must be exactly one canonical Base64 digest; it is compared with every
 * secret of every webhook in constant time, and the first webhook with a matching secret is the
 * sender. All secrets are tried even after a match, so timing does not tell which one matched.
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
  let webhook: string | undefined;
  for (const secret of secrets) {
    for (const key of secret.keys) {
      const expected = createHmac('sha256', key).update(rawBody).digest();
      if (timingSafeEqual(expected, given) && webhook === undefined) webhook = secret.name;
    }
  }
  return webhook === undefined ? { ok: false, reason: 'mismatch' } : { ok: true, webhook };
}
