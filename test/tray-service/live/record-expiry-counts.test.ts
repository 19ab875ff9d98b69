import { expect } from 'chai';
import request from 'supertest';
import { DAY_MS } from '../../../shared/time/durations.ts';
import { seedRecords } from '../../support/seed-tray.ts';
import { bearer } from '../api/support/api-harness.ts';
import { useLiveTray } from './support/live-harness.ts';
import { dataOf, named, openSse, type SseEvent, type SseStream } from './support/sse-client.ts';

const STREAM = '/notifications/v3/stream';
/** The seeds' retention (seed-tray.ts). */
const RETENTION_MS = 90 * DAY_MS;

const unreadOf = (event: SseEvent) => dataOf<{ totalUnreadCount: number }>(event).totalUnreadCount;

// A record passing its expiry leaves the counts of GET v3 without any write, so no change is
// published: the stream counts again when the first record it counted expires.
describe('live streams and records that expire', function () {
  this.timeout(30_000);
  const tray = useLiveTray({ instances: 1 });
  const open: SseStream[] = [];
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
  });

  it('send the counts again as each counted record expires, the counts GET v3 then answers', async () => {
    const user = 'u-expiring';
    const { base } = tray.instance(0);
    const opened = Date.now();
    await seedRecords(tray.worker.storage, [
      // Seconds apart, and the first late enough for the stream to open before it on a loaded machine.
      { userId: user, targetId: 'p-first', lastUpdate: opened - RETENTION_MS + 5_000 },
      { userId: user, targetId: 'p-second', lastUpdate: opened - RETENTION_MS + 8_000 },
      { userId: user, targetId: 'p-fresh' },
    ]);
    const stream = await openSse(`${base}${STREAM}`, { Authorization: await bearer(user) });
    open.push(stream);
    expect(unreadOf(await stream.next(named('unread')))).to.equal(3);
    const counted = (count: number) => (event: SseEvent) =>
      event.event === 'unread' && unreadOf(event) === count;
    await stream.next(counted(2), { timeoutMs: 9_000 });
    expect(Date.now() - opened).to.be.within(5_000, 7_500);
    await stream.next(counted(1), { timeoutMs: 9_000 });
    expect(Date.now() - opened).to.be.within(8_000, 10_500);
    const v3 = await request(base)
      .get('/notifications/v3')
      .set('Authorization', await bearer(user));
    expect(v3.body.data).to.deep.equal({ totalUnreadCount: 1, totalUnseenCount: 1 });
    // Nothing else expires: no more counts are sent.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(stream.events.filter(named('unread')).map(unreadOf)).to.deep.equal([3, 2, 1]);
  });
});
