import { createHmac, timingSafeEqual } from 'node:crypto';
import type { StandardWebhook } from './parse-webhook-secrets.ts';

type HeaderValue = string | readonly string[] | undefined;

export type StandardFailure =
  | 'missing-id'
  | 'bad-id'
  | 'missing-timestamp'
  | 'bad-timestamp'
  | 'stale'
  | 'future'
  | 'missing-signature'
  | 'mismatch';

export type StandardSignatureResult =
  | { readonly ok: true; readonly webhook: string; readonly id: string }
  | { readonly ok: false; readonly reason: StandardFailure };

export interface StandardClock {
  /** Unix seconds now. */
  readonly nowSeconds: number;
  /** How far `webhook-timestamp` may be from now, either way. */
  readonly toleranceSeconds: number;
}

/** Printable ASCII without spaces; long enough for any id scheme in use (Svix's are 31 characters). */
const messageId = /^[\x21-\x7e]{1,256}$/;
const unixSeconds = /^[0-9]{1,12}$/;
/** `v1,` and the Base64 of a 32-byte digest. */
const v1Signature = /^v1,([A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=)$/;
const failed = (reason: StandardFailure): StandardSignatureResult => ({ ok: false, reason });

/**
 * Checks a delivery signed with the Standard Webhooks scheme
 * (https://www.standardwebhooks.com/):
 * `webhook-signature` holds space-separated signatures (on one header line or several), each `v1,`
 * and Base64 of HMAC-SHA256 over `webhook-id.webhook-timestamp.body` keyed with a webhook's decoded
 * secret; one matching any secret of any of `webhooks` is enough. Signatures of other versions
 * (`v1a,`) are skipped.
 *
 * The timestamp must be within the tolerance of now, either way: a captured delivery cannot be
 * replayed later, and since the id is signed too, its signature cannot carry another id (the
 * receiver dedupes by the id). The parts are checked before any HMAC is computed, so a stale or
 * incomplete delivery costs nothing; every comparison is constant-time.
 */
export function verifyStandardSignature(
  rawBody: Buffer,
  headers: Readonly<Record<string, HeaderValue>>,
  webhooks: readonly StandardWebhook[],
  clock: StandardClock,
): StandardSignatureResult {
  const id = headers['webhook-id'];
  if (id === undefined || id === '') return failed('missing-id');
  if (typeof id !== 'string' || !messageId.test(id)) return failed('bad-id');
  const timestamp = headers['webhook-timestamp'];
  if (timestamp === undefined || timestamp === '') return failed('missing-timestamp');
  if (typeof timestamp !== 'string' || !unixSeconds.test(timestamp)) return failed('bad-timestamp');
  const age = clock.nowSeconds - Number(timestamp);
  if (age > clock.toleranceSeconds) return failed('stale');
  if (age < -clock.toleranceSeconds) return failed('future');
  const header = headers['webhook-signature'];
  if (header === undefined || header === '' || header.length === 0) return failed('missing-signature');

  const given = signaturesOf(typeof header === 'string' ? header : header.join(' '));
  if (given.length === 0) return failed('mismatch');
  const signed = `${id}.${timestamp}.`;
  for (const webhook of webhooks) {
    for (const key of webhook.keys) {
      const expected = createHmac('sha256', key).update(signed).update(rawBody).digest();
      // Every given signature is compared, matched or not: the time taken does not tell which.
      let match = false;
      for (const signature of given) match = timingSafeEqual(expected, signature) || match;
      if (match) return { ok: true, webhook: webhook.name, id };
    }
  }
  return failed('mismatch');
}

/**
 * The decoded `v1` digests of a `webhook-signature` value; anything else in it is skipped.
 * Signatures are separated by spaces, and Node joins repeated header lines with ", ", which leaves
 * a comma behind the last signature of every line but the last: no signature ends in a comma (its
 * only one follows the version), so a comma before the spaces is that separator and is dropped.
 */
function signaturesOf(header: string): Buffer[] {
  const digests: Buffer[] = [];
  for (const part of header.split(/,?[ \t]+/)) {
    const base64 = v1Signature.exec(part)?.[1];
    if (base64 !== undefined) digests.push(Buffer.from(base64, 'base64'));
  }
  return digests;
}
