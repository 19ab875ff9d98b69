import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { useLiveTray } from './support/live-harness.ts';

describe('guessing stream tickets (AUTH_FAILURE_LIMIT)', function () {
  this.timeout(30_000);
  const LIMIT = 4;
  const tray = useLiveTray({ instances: 2, failedAuthLimit: LIMIT });
  const guess = () => `/notifications/v3/stream?ticket=${randomBytes(32).toString('base64url')}`;

  it('answers unknown tickets 401, then refuses the address with 429 on every instance it reaches', async () => {
    for (let i = 0; i < LIMIT; i += 1) {
      await request(tray.instance(i % 2).base)
        .get(guess())
        .expect(401);
    }
    // Over the shared count: the instance that counts it refuses the address from then on.
    for (const index of [0, 1]) {
      await request(tray.instance(index).base).get(guess());
      const res = await request(tray.instance(index).base).get(guess());
      expect(res.status).to.equal(429);
      expect(res.body).to.include({ status: 'error', code: 400311 });
      expect(Number(res.headers['retry-after'])).to.be.within(1, 60);
    }
  });
});
