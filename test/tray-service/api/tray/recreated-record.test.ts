import { expect } from 'chai';
import request from 'supertest';
import { TRAY_RECORDS, type TrayRecordDoc } from '../../../../shared/tray/tray-record.ts';
import { bearer, useTrayApi } from '../support/api-harness.ts';
import { aTrayRecord, insertRecords } from '../../../support/tray-record-builder.ts';

// Found by the reliability suite: a record re-created under the same _id after delete-all started
// again at version 1, and the claims of its previous life (`_id#2`, ...) made every write to it lose
// for the claim takeover time (60 s): the API answered 500 after 50 CAS rounds. A record now starts
// at its creation time on the tray's clock, so its versions never repeat those of a previous life.
describe('POST /notifications/v2/read on a record re-created after delete-all', function () {
  this.timeout(30_000);
  const api = useTrayApi();

  it('marks it read (200), as on its first life', async () => {
    const app = api.app();
    const auth = await bearer('user-r');
    const record = () => aTrayRecord({ userId: 'user-r', verb: 'comment', targetId: 'post-again' });
    const read = () =>
      request(app)
        .post('/notifications/v2/read')
        .set('authorization', auth)
        .send({ verb: 'comment', targetId: 'post-again' });

    await insertRecords(api.db, [record()]);
    await read().expect(200);
    await request(app).delete('/notifications/v3/delete-all').set('authorization', auth).expect(200);
    // New activity on the same post: the worker inserts the record anew, at a new version.
    await new Promise((resolve) => setTimeout(resolve, 2));
    await insertRecords(api.db, [record()]);
    await read().expect(200);
    const stored = await api.db.collection<TrayRecordDoc>(TRAY_RECORDS).findOne({ userId: 'user-r' });
    expect(stored?.hasRead).to.equal(true);
  });
});
