import type { EncodedWebhookJob, WebhookSignatureScheme } from '../shared/queue/webhook-queue.ts';
import type { Envelope } from './envelope/validate-envelope.ts';

export interface Delivery {
  readonly dedupeKey: string;
  readonly webhook: string;
  readonly scheme: WebhookSignatureScheme;
  readonly receivedAt: Date;
  readonly envelope: Envelope;
}

/**
 * The job for a verified delivery, serialised as JSON.stringify would serialise its WebhookJobData
 * (same keys, same order), except that `data` is the sender's own text of that object: already
 * checked to be valid JSON, and read back by the worker's JSON.parse as the same value.
 * test/receiver/delivery-job.test.ts compares it with JSON.stringify of a typed WebhookJobData, so
 * a field added to that type fails there until it is added here.
 */
export function deliveryJob(delivery: Delivery): EncodedWebhookJob {
  const { dedupeKey, webhook, scheme, receivedAt, envelope } = delivery;
  const json =
    `{"dedupeKey":${JSON.stringify(dedupeKey)},"webhook":${JSON.stringify(webhook)},` +
    `"scheme":${JSON.stringify(scheme)},` +
    `"receivedAt":${JSON.stringify(receivedAt.toISOString())},"event":${JSON.stringify(envelope.event)},` +
    `"data":${envelope.dataJson}}`;
  return { dedupeKey, json };
}
