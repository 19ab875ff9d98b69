import { expect } from 'chai';
import request from 'supertest';
import { seedActivities } from '../../support/seed-tray.ts';
import { bearer } from '../api/support/api-harness.ts';
import { useLiveTray } from './support/live-harness.ts';
import { named, openSse } from './support/sse-client.ts';

const STREAM = '/notifications/v3/stream';

// A burst of changes inside one settle window (mark-all-as-read of many records) fills the id with
// the states it delivered; a client resuming with a ticket sends it back in the query.
describe('live stream ids after a burst of changes', function () {
  this.timeout(60_000);
  const tray = useLiveTray({ instances: 1 });
  const user = 'u-long-id';

  it('resume through ?ticket=…&lastEventId=', async () => {
    const base = tray.instance(0).base;
    const now = Date.now();
    const activities = Array.from({ length: 70 }, (_, i) =>
      seedActivities({ userId: user, targetId: `p-${i}`, lastUpdate: now - 60_000 - i }),
    ).flat();
    await tray.worker.storage.writes.applyPersonal(activities, { now: now - 60_000, retentionDays: 90 });
    const stream = await openSse(`${base}${STREAM}`, { Authorization: await bearer(user) });
    await stream.next(named('unread'));
    await request(base)
      .get('/notifications/v3/mark-all-as-read')
      .set('Authorization', await bearer(user));
    const read = await stream.next(named('read'));
    stream.close();

    const ticket = await request(base)
      .post('/notifications/v3/stream-ticket')
      .set('Authorization', await bearer(user))
      .send({});
    const query = new URLSearchParams({ ticket: ticket.body.data.ticket, lastEventId: read.id ?? '' });
    const resumed = await openSse(`${base}${STREAM}?${query.toString()}`);
    const status = resumed.status;
    resumed.close();
    expect(status, `an id of ${read.id?.length} characters`).to.equal(200);
  });
});
