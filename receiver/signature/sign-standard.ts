import { createHmac } from 'node:crypto';
import { standardSecretKey } from './parse-webhook-secrets.ts';

/** What a Standard Webhooks signature covers besides the body: the message id and the send time. */
export interface StandardMessage {
  /** `webhook-id`: the message's id, the same on every retry of it. */
  readonly id: string;
  /** `webhook-timestamp`: Unix seconds of this attempt. */
  readonly timestamp: number;
}

/**
 * The `webhook-signature` of a body under the Standard Webhooks scheme: `v1,` and Base64 of
 * HMAC-SHA256 over `id.timestamp.body`, keyed with the secret's decoded bytes (the Base64 after
 * `whsec_`). The counterpart of verifyStandardSignature, for the tools and tests that send signed
 * deliveries; https://www.standardwebhooks.com/
 */
export function signStandard(body: string | Buffer, secret: string, message: StandardMessage): string {
  const digest = createHmac('sha256', standardSecretKey(secret))
    .update(`${message.id}.${message.timestamp}.`)
    .update(body)
    .digest('base64');
  return `v1,${digest}`;
}

/** The three headers of a Standard Webhooks delivery of `body`, signed with `secret`. */
export function standardSignatureHeaders(
  body: string | Buffer,
  secret: string,
  message: StandardMessage,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  return {
    'webhook-id': message.id,
    'webhook-timestamp': String(message.timestamp),
    'webhook-signature': signStandard(body, secret, message),
  };
}
