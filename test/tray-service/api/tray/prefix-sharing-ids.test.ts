import { expect } from 'chai';
import request from 'supertest';
import type { TrayVerb } from '../../../../tray-service/domain/tray-record.ts';
import { bearer, useTrayApi } from '../support/api-harness.ts';
import { seedRecords } from '../../../support/seed-tray.ts';
import { readAll } from '../../worker/worker-harness.ts';

const NOW = Date.UTC(2026, 0, 15, 12);
const MIN = 60_000;

/**
 * Pairs of (verb, target, user) whose parts joined with `_` read the same: the record key once was
 * that plain join, so the second user reached the first one's record by naming a target that ends
 * in the first user's id prefix (docs/contract.md#tray-records).
 */
const sharedJoins: { verb: TrayVerb; owner: string; target: string; caller: string; asked: string }[] = [
  { verb: 'post', owner: 'alice_smith', target: 'c1', caller: 'smith', asked: 'c1_alice' },
  { verb: 'comment', owner: 'a_b', target: 'p_1', caller: 'b', asked: 'p_1_a' },
  { verb: 'reaction', owner: 'x_y_z', target: 'p', caller: 'z', asked: 'p_x_y' },
  { verb: 'mention', owner: '_m', target: 'q_', caller: 'm', asked: 'q__' },
];

describe('users whose ids share a prefix (docs/contract.md#tray-records)', () => {
  const api = useTrayApi();
  const app = () => api.app({ now: () => NOW });
  const stored = (userId: string) => readAll(api.storage, userId, NOW);

  before(async () => {
    await seedRecords(
      api.storage,
      sharedJoins.map(({ verb, owner, target }) => ({
        userId: owner,
        verb,
        targetId: target,
        lastUpdate: NOW - MIN,
      })),
    );
  });

  for (const { verb, owner, target, caller, asked } of sharedJoins) {
    describe(`${caller} naming ${verb} target ${asked} (${owner} has ${verb} on ${target})`, () => {
      it(`answers 404, as for a record that does not exist, and leaves ${owner}'s record as it was`, async () => {
        const before = await stored(owner);
        const res = await request(app())
          .post('/notifications/v2/read')
          .set('Authorization', await bearer(caller))
          .send({ verb, targetId: asked })
          .expect(404);
        expect(res.body).to.include({ status: 'error', code: 404000 });
        expect(await stored(owner)).to.deep.equal(before);
        expect(before).to.have.length(1);
        expect(before[0]).to.include({ hasRead: false });
      });

      it(`shows ${caller} none of ${owner}'s records and leaves ${owner}'s unread count at 1`, async () => {
        const history = await request(app())
          .get('/notifications/v3/history')
          .set('Authorization', await bearer(caller))
          .expect(200);
        expect(history.body.data).to.deep.equal([]);
        const count = await request(app())
          .get('/notifications/v3')
          .set('Authorization', await bearer(owner))
          .expect(200);
        expect(count.body).to.deep.equal({ data: { totalUnreadCount: 1, totalUnseenCount: 1 } });
      });
    });
  }

  describe('a user whose ids contain `_`', () => {
    it('marks their own record read by its verb and target id', async () => {
      const user = 'own_user';
      await seedRecords(api.storage, [
        { userId: user, verb: 'comment', targetId: 'p_own', lastUpdate: NOW - MIN },
      ]);
      await request(app())
        .post('/notifications/v2/read')
        .set('Authorization', await bearer(user))
        .send({ verb: 'comment', targetId: 'p_own' })
        .expect(200);
      const [record] = await stored(user);
      expect(record).to.include({ hasRead: true });
      const history = await request(app())
        .get('/notifications/v3/history')
        .set('Authorization', await bearer(user))
        .expect(200);
      expect(history.body.data.map((row: { targetId: string }) => row.targetId)).to.deep.equal(['p_own']);
    });
  });
});
