import { expect } from 'chai';
import request from 'supertest';
import { bearer, useTrayApi } from '../../api/support/api-harness.ts';

describe('per-user rate limit (docs/contract.md#limits)', () => {
  // 5 calls per window here instead of 100 keeps the test short; the rule is the same.
  const api = useTrayApi({ rateLimit: 5 });

  describe('across two API instances sharing Redis', () => {
    it('counts the calls of both and answers the call over the limit with 429', async () => {
      const [first, second] = [api.app(), api.app()];
      const auth = await bearer('busy-user');
      for (let i = 0; i < 5; i++) {
        await request(i % 2 === 0 ? first : second)
          .get('/notifications/v3')
          .set('Authorization', auth)
          .expect(200);
      }
      const res = await request(second).get('/notifications/v3').set('Authorization', auth).expect(429);
      expect(res.body).to.deep.equal({ status: 'error', code: 400311, message: 'RateLimit Exceed' });
      expect(Number(res.headers['retry-after'])).to.be.within(1, 60);
      await request(first).get('/block/members?checkList=a').set('Authorization', auth).expect(429);
    });

    it('keeps a separate budget for each user', async () => {
      const auth = await bearer('calm-user');
      await request(api.app()).get('/notifications/v3').set('Authorization', auth).expect(200);
    });
  });
});
