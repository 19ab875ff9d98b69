import { expect } from 'chai';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { createChangePublisher } from '../../../tray-service/live/change-publisher.ts';
import { SETTLE_MS } from '../../../tray-service/domain/settle-window.ts';
import { applyJob } from '../../../tray-service/use-cases/apply-job.ts';
import { seedActivities } from '../../support/seed-tray.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { bearer } from '../api/support/api-harness.ts';
import { commentEvent, minute } from '../worker/event-builder.ts';
import { jobDataOf } from '../worker/worker-harness.ts';
import { dataOf, named, openSse } from './support/sse-client.ts';
import { useLiveOnOwnRedis } from './support/use-live-on-own-redis.ts';

const silent = createLogger({ name: 'test', level: 'silent' });

// A Redis of its own: the test stops and restarts it.
describe('live stream while Redis is down', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  const live = useLiveOnOwnRedis('live-outage', () => suite.storage);

  it('stays open, and catches up from the database on a record written meanwhile once Redis is back', async () => {
    const user = 'u-out';
    const stream = await openSse(`${live.instance.base}/notifications/v3/stream`, {
      Authorization: await bearer(user),
    });
    await stream.next(named('unread'));

    await live.redisServer.stop();
    // A worker's job applied while Redis is away: stored, but its announcement is lost.
    const publisher = createChangePublisher(live.redis, 'live', silent);
    await applyJob(
      jobDataOf(
        commentEvent({
          postId: 'p-out',
          postOwner: user,
          author: 'u-cid',
          commentId: 'cm-out',
          createdAt: minute(1),
        }),
      ),
      {
        storage: suite.storage,
        eventsRetentionDays: 30,
        trayRetentionDays: 90,
        networkId: 'default',
        onWritten: publisher.recordsWritten,
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(stream.events.filter(named('record'))).to.deep.equal([]);

    await live.restartRedis();
    const caught = await stream.next(named('record'), { timeoutMs: 15_000 });
    expect(dataOf<NotificationRecord>(caught).targetId).to.equal('p-out');
    await stream.next(
      (event) =>
        event.event === 'unread' && dataOf<{ totalUnreadCount: number }>(event).totalUnreadCount === 1,
    );
    stream.close();
  });
});

// A quiet stream's id moves forward at its heartbeats (docs/live-tray.md): not while the stream's
// subscription is down, since what changed meanwhile reaches it only by the catch-up from its cursor
// once the subscription is back. Here the id would move up to the clock at every heartbeat.
describe('a quiet stream while Redis is down', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  const live = useLiveOnOwnRedis('live-outage-quiet', () => suite.storage, { heartbeatMs: 100, quietMs: 0 });

  it('keeps its id where it was, so the catch-up brings what was written unannounced meanwhile', async () => {
    const user = 'u-hush';
    const stream = await openSse(`${live.instance.base}/notifications/v3/stream`, {
      Authorization: await bearer(user),
    });
    await stream.next(named('unread'));

    await live.redisServer.stop();
    // Stored with no announcement at all (no lost change is recorded for it either): only the
    // catch-up from the stream's cursor can bring it.
    const at = Date.now();
    await suite.storage.writes.applyPersonal(
      seedActivities({ userId: user, targetId: 'p-hush', lastUpdate: at }),
      { now: at, retentionDays: 90, onWritten: async () => undefined },
    );
    // Longer than the cursor's settle window: an id moved meanwhile would count it as delivered.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS + 1_000));
    expect(stream.events.filter(named('record'))).to.deep.equal([]);

    await live.restartRedis();
    const caught = await stream.next(named('record'), { timeoutMs: 15_000 });
    expect(dataOf<NotificationRecord>(caught).targetId).to.equal('p-hush');
    stream.close();
  });
});
