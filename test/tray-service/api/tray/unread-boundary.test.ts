import { expect } from 'chai';
import request from 'supertest';
import { bearer, useTrayApi } from '../support/api-harness.ts';
import { seedRecords } from '../../../support/seed-tray.ts';

// Black box on purpose: only the public endpoints decide, so the rule holds however the store
// keeps read state. Records are written as the worker writes them (through the storage port); the API's clock is
// pinned so "the last-read time" is a known instant.
describe('GET /notifications/v3 at the last-read boundary', () => {
  const api = useTrayApi();
  const LAST_READ = Date.parse('2026-11-20T12:00:00.000Z');
  const user = 'boundary-user';

  before(async () => {
    await seedRecords(api.storage, [
      { userId: user, targetId: 'before', lastUpdate: LAST_READ - 1 },
      { userId: user, targetId: 'at', lastUpdate: LAST_READ },
      { userId: user, targetId: 'after', lastUpdate: LAST_READ + 1 },
    ]);
  });

  const unread = async () =>
    (
      await request(api.app({ now: () => LAST_READ }))
        .get('/notifications/v3')
        .set('Authorization', await bearer(user))
        .expect(200)
    ).body;

  it('counts all three before the user reads', async () => {
    expect(await unread()).to.deep.equal({ data: { totalUnreadCount: 3, totalUnseenCount: 3 } });
  });

  it('after POST /v2/last-read at that instant, counts only the record changed after it', async () => {
    await request(api.app({ now: () => LAST_READ }))
      .post('/notifications/v2/last-read')
      .set('Authorization', await bearer(user))
      .expect(200);
    // The record changed exactly at the last-read time was seen by that read: not unread.
    expect(await unread()).to.deep.equal({ data: { totalUnreadCount: 1, totalUnseenCount: 1 } });
  });
});
