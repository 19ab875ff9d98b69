import type { WebhookSecret } from './parse-webhook-secrets.ts';

export interface WebhookDescription {
  readonly name: string;
  readonly scheme: WebhookSecret['scheme'];
  /** The headers its signature is read from. */
  readonly headers: string;
  /** How many secrets verify it (more than one during a rotation). */
  readonly secrets: number;
  readonly toleranceSeconds?: number;
}

/** How each webhook's signature is checked, for the start-up log line: everything but the secrets. */
export function describeWebhooks(
  webhooks: readonly WebhookSecret[],
  toleranceSeconds: number,
): WebhookDescription[] {
  return webhooks.map((webhook) =>
    webhook.scheme === 'platform'
      ? { name: webhook.name, scheme: webhook.scheme, headers: webhook.header, secrets: webhook.keys.length }
      : {
          name: webhook.name,
          scheme: webhook.scheme,
          headers: 'webhook-id, webhook-timestamp, webhook-signature',
          secrets: webhook.keys.length,
          toleranceSeconds,
        },
  );
}
