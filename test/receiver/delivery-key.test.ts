import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { deliveryKey } from '../../receiver/delivery-key.ts';
import { channelDidCreate } from './support/signed-request.ts';

const sha256 = (body: string) => createHash('sha256').update(body).digest('hex');
const membership = (event: string, createdAt?: string) =>
  JSON.stringify({
    event,
    data: {
      community: { communityId: 'c-hike', displayName: 'Hiking Club' },
      userIds: ['u-eve'],
      ...(createdAt ? { createdAt } : {}),
    },
  });

describe('deliveryKey', () => {
  it('is the SHA-256 of the body for an event of the catalogue', () => {
    const body = channelDidCreate('key-1');
    expect(deliveryKey(Buffer.from(body))).to.equal(sha256(body));
  });

  it('is the SHA-256 of the body for a join or leave with createdAt (a rejoin differs by it)', () => {
    for (const event of ['community.didJoin', 'community.didLeave']) {
      const body = membership(event, '2026-11-20T09:30:00.000Z');
      expect(deliveryKey(Buffer.from(body)), event).to.equal(sha256(body));
    }
  });

  it('is new for every delivery of a join or leave without createdAt', () => {
    for (const event of ['community.didJoin', 'community.didLeave']) {
      const body = Buffer.from(membership(event));
      const keys = new Set([deliveryKey(body), deliveryKey(body), deliveryKey(body)]);
      expect(keys.size, event).to.equal(3);
      expect(keys.has(sha256(body.toString())), event).to.equal(false);
      for (const key of keys) expect(key).to.match(/^[0-9a-f]{64}$/);
    }
  });

  it('derives that key from the body and the nonce only', () => {
    const body = Buffer.from(membership('community.didJoin'));
    expect(deliveryKey(body, () => 'n-1')).to.equal(deliveryKey(body, () => 'n-1'));
    expect(deliveryKey(body, () => 'n-1')).not.to.equal(deliveryKey(body, () => 'n-2'));
  });
});
