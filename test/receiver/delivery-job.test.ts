import { expect } from 'chai';
import { deliveryJob } from '../../receiver/delivery-job.ts';
import { validateEnvelope } from '../../receiver/envelope/validate-envelope.ts';
import type { WebhookJobData, WebhookSignatureScheme } from '../../shared/queue/webhook-queue.ts';

const receivedAt = new Date('2026-11-22T01:02:03.004Z');

function jobFor(body: string, webhook = 'eu', scheme: WebhookSignatureScheme = 'platform') {
  const result = validateEnvelope(Buffer.from(body));
  if (!result.ok) throw new Error(result.message);
  return deliveryJob({ dedupeKey: 'ab'.repeat(32), webhook, scheme, receivedAt, envelope: result.envelope });
}

describe('deliveryJob', () => {
  it('is the JSON.stringify of the WebhookJobData, byte for byte, for a compact body', () => {
    const data = { channel: { channelId: 'c-1', name: 'Ünïcode "quoted" \\ \u2028' }, n: [1, 2.5, -3e-7] };
    const expected: WebhookJobData = {
      dedupeKey: 'ab'.repeat(32),
      webhook: 'we"ird',
      scheme: 'standard-webhooks',
      receivedAt: receivedAt.toISOString(),
      event: 'channel.didCreate',
      data,
    };
    const job = jobFor(JSON.stringify({ event: 'channel.didCreate', data }), 'we"ird', 'standard-webhooks');
    expect(job).to.deep.equal({ dedupeKey: expected.dedupeKey, json: JSON.stringify(expected) });
  });

  it('carries a pretty-printed body as one line that parses to the same job', () => {
    const envelope = { data: { a: [1, { b: 'x y' }] }, event: 'post.didCreate' };
    const job = jobFor(JSON.stringify(envelope, null, '\r\n  '));
    expect(job.json).to.not.match(/[\r\n]/);
    expect(JSON.parse(job.json)).to.deep.equal({
      dedupeKey: 'ab'.repeat(32),
      webhook: 'eu',
      scheme: 'platform',
      receivedAt: receivedAt.toISOString(),
      event: 'post.didCreate',
      data: envelope.data,
    });
  });
});
