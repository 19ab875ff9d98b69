import type { WebhookSecret } from './parse-webhook-secrets.ts';

/**
 * Fewer bytes than this in a platform-scheme secret is taken for a placeholder (`secret`, `s1`):
 * anyone who guesses it can forge deliveries. The platform's own secret format is not published,
 * so a shorter one is warned about at start-up, not refused (docs/receiver.md#signature-schemes).
 */
export const MIN_SECRET_BYTES = 16;

/**
 * The platform-scheme webhooks with a secret shorter than MIN_SECRET_BYTES, by name (never the
 * secret). A Standard Webhooks secret is checked when it is parsed (24 to 64 bytes). Pure.
 */
export function shortSecretWebhooks(webhooks: readonly WebhookSecret[]): string[] {
  return webhooks
    .filter(
      (webhook) =>
        webhook.scheme === 'platform' &&
        webhook.keys.some((key) => (key.symmetricKeySize ?? 0) < MIN_SECRET_BYTES),
    )
    .map((webhook) => webhook.name);
}
