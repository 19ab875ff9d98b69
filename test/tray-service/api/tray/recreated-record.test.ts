import { expect } from 'chai';
import request from 'supertest';
import { bearer, useTrayApi } from '../support/api-harness.ts';
import { seedRecords } from '../../../support/seed-tray.ts';
import { readAll } from '../../worker/worker-harness.ts';

// Found by the reliability suite on MongoDB: a record re-created under the same key after
// delete-all started again at version 1, and the claims of its previous life made every write to
// it lose for the claim takeover time (60 s): the API answered 500. Every adapter must let a
// re-created record be marked read as on its first life.
describe('POST /notifications/v2/read on a record re-created after delete-all', function () {
  this.timeout(30_000);
  const api = useTrayApi();

  it('marks it read (200), as on its first life', async () => {
    const app = api.app();
    const auth = await bearer('user-r');
    const record = () => ({ userId: 'user-r', verb: 'comment' as const, targetId: 'post-again' });
    const read = () =>
      request(app)
        .post('/notifications/v2/read')
        .set('authorization', auth)
        .send({ verb: 'comment', targetId: 'post-again' });

    await seedRecords(api.storage, [record()]);
    await read().expect(200);
    await request(app).delete('/notifications/v3/delete-all').set('authorization', auth).expect(200);
    // New activity on the same post: the worker writes the record anew.
    await new Promise((resolve) => setTimeout(resolve, 2));
    await seedRecords(api.storage, [{ ...record(), lastActionId: 'comment-2' }]);
    await read().expect(200);
    const [stored] = await readAll(api.storage, 'user-r');
    expect(stored?.hasRead).to.equal(true);
  });
});
