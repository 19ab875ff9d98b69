import { createHmac } from 'node:crypto';

/**
 * The platform's `x-service-signature` for a body: Base64(HMAC-SHA256(secret as UTF-8, raw body
 * bytes)) (docs/contract.md#signature). The counterpart of verifySignature, for the tools and
 * tests that send signed deliveries.
 */
export function signBody(body: string | Buffer, secret: string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('base64');
}
