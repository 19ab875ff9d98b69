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

  // The receiver reads no time: any ISO 8601 form the tray takes keys the body by its bytes, so a
  // redelivery (the same bytes) is one, and a rejoin at another time is another.
  it('keys a join dated in any ISO 8601 form by its bytes, without reading the time', () => {
    for (const createdAt of [
      '2026-11-20T09:30:00+0000',
      '2026-11-20T09:30:00+00',
      '2026-11-20T09:30Z',
      '2026-11-20T09:30:00.000000Z',
    ]) {
      const body = membership('community.didJoin', createdAt);
      expect(deliveryKey(Buffer.from(body)), createdAt).to.equal(sha256(body));
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

  // Only data.createdAt tells a rejoin from the first join: a createdAt elsewhere (the community's or
  // a user's, as other events' objects carry them) is the same in both.
  it('is new for every delivery of a join or leave whose only createdAt is a nested one', () => {
    for (const event of ['community.didJoin', 'community.didLeave']) {
      const body = Buffer.from(
        JSON.stringify({
          event,
          data: {
            community: {
              communityId: 'c-hike',
              displayName: 'Hiking Club',
              createdAt: '2025-01-01T00:00:00.000Z',
            },
            userIds: ['u-eve'],
            users: [{ userId: 'u-eve', displayName: 'Eve', createdAt: '2026-01-01T00:00:00.000Z' }],
          },
        }),
      );
      const keys = new Set([deliveryKey(body), deliveryKey(body)]);
      expect(keys.size, event).to.equal(2);
      expect(keys.has(sha256(body.toString())), event).to.equal(false);
    }
  });

  it('is new for every delivery of a join whose data.createdAt is null (the tray counts it from receipt)', () => {
    const body = Buffer.from(
      JSON.stringify({
        event: 'community.didJoin',
        data: { community: { communityId: 'c' }, userIds: ['u'], createdAt: null },
      }),
    );
    expect(deliveryKey(body)).not.to.equal(deliveryKey(body));
  });

  it('is new for every delivery of an undated join that starts with a byte order mark', () => {
    const body = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(membership('community.didJoin')),
    ]);
    expect(deliveryKey(body)).not.to.equal(deliveryKey(body));
  });

  // A profile update carries the new profile and no time: changed back, it repeats an earlier
  // update byte for byte, and keyed by its body the change back would be dropped as a redelivery.
  it('is new for every delivery of a user.didUpdate without data.createdAt', () => {
    const body = Buffer.from(
      JSON.stringify({ event: 'user.didUpdate', data: { users: [{ userId: 'u-ana', displayName: 'Ana' }] } }),
    );
    const keys = new Set([deliveryKey(body), deliveryKey(body)]);
    expect(keys.size).to.equal(2);
    expect(keys.has(sha256(body.toString()))).to.equal(false);
  });

  it('is the SHA-256 of the body for a user.didDelete (a deletion is final: a repeat is a redelivery)', () => {
    const body = JSON.stringify({ event: 'user.didDelete', data: { users: [{ userId: 'u-ana' }] } });
    expect(deliveryKey(Buffer.from(body))).to.equal(sha256(body));
  });

  it('is the SHA-256 of the body for another event that quotes a membership event name', () => {
    const body = JSON.stringify({
      event: 'message.didCreate',
      data: { message: { text: 'say "community.didJoin"' } },
    });
    expect(deliveryKey(Buffer.from(body))).to.equal(sha256(body));
  });

  it('derives that key from the body and the nonce only', () => {
    const body = Buffer.from(membership('community.didJoin'));
    expect(deliveryKey(body, () => 'n-1')).to.equal(deliveryKey(body, () => 'n-1'));
    expect(deliveryKey(body, () => 'n-1')).not.to.equal(deliveryKey(body, () => 'n-2'));
  });
});
