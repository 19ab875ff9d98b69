import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { useLiveTray } from './support/live-harness.ts';
import { bearer } from '../api/support/api-harness.ts';

// A ticket is 256 random bits: no count of failures would protect it, and counting unknown
// tickets let another site's page (an EventSource with a made-up ticket, from a visitor's browser)
// lock the visitor's address out of the tray. Bearer tokens that do not verify still count.
describe('guessing stream tickets (AUTH_FAILURE_LIMIT)', function () {
  this.timeout(30_000);
  const LIMIT = 4;
  const tray = useLiveTray({ instances: 2, failedAuthLimit: LIMIT });
  const guess = () => `/notifications/v3/stream?ticket=${randomBytes(32).toString('base64url')}`;

  it('answers unknown tickets 401 however many, and never refuses the address for them', async () => {
    for (let i = 0; i < LIMIT * 3; i += 1) {
      // Every other one beside an Authorization header, which the ticket decides without reading:
      // it was counted as a guessed token.
      const call = request(tray.instance(i % 2).base).get(guess());
      const res = await (i % 2 === 0 ? call : call.set('Authorization', 'Bearer not-read'));
      expect(res.status).to.equal(401);
      expect(res.body).to.include({ status: 'error', code: 401000 });
    }
    for (const index of [0, 1]) {
      await request(tray.instance(index).base)
        .get('/notifications/v3')
        .set('Authorization', await bearer('u-ticket-guesser-neighbour'))
        .expect(200);
    }
  });
});
