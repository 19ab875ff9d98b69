import type { WebhookSecret } from './parse-webhook-secrets.ts';

const STANDARD_PREFIX = Buffer.from('whsec_');

/**
 * The platform-scheme webhooks holding a secret in the Standard Webhooks form (`whsec_`), by name
 * (never the secret): most likely a Standard Webhooks sender whose WEBHOOK_SIGNATURE_SCHEME entry
 * was forgotten, whose every delivery would be refused 401 for a missing x-service-signature.
 * Warned about at start-up, not refused: a platform could issue secrets that look so and sign
 * bodies its own way (docs/receiver.md#signature-schemes). Pure.
 */
export function standardFormSecretWebhooks(webhooks: readonly WebhookSecret[]): string[] {
  return webhooks
    .filter(
      (webhook) =>
        webhook.scheme === 'platform' &&
        webhook.keys.some((key) => key.export().subarray(0, STANDARD_PREFIX.length).equals(STANDARD_PREFIX)),
    )
    .map((webhook) => webhook.name);
}
