import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startRedis, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createRedis, type RedisClient } from '../../../shared/redis/create-redis.ts';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { startBanCache, type BanCache } from '../../../tray-service/http/auth/ban-cache.ts';
import { createChangePublisher } from '../../../tray-service/live/change-publisher.ts';
import { applyJob } from '../../../tray-service/use-cases/apply-job.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { bearer } from '../api/support/api-harness.ts';
import { commentEvent, minute } from '../worker/event-builder.ts';
import { jobDataOf } from '../worker/worker-harness.ts';
import { dataOf, named, openSse } from './support/sse-client.ts';
import { startLiveInstance, type StartedLiveInstance } from './support/start-live-instance.ts';

const silent = createLogger({ name: 'test', level: 'silent' });

// A Redis of its own: the test stops and restarts it.
describe('live stream while Redis is down', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  let dir: string;
  let redisServer: LocalServer;
  let port: number;
  let redis: RedisClient;
  let bans: BanCache;
  let instance: StartedLiveInstance | undefined;
  let base: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'live-outage-'));
    port = await freePort();
    redisServer = await startRedis({ dir: join(dir, 'redis'), port, persistent: true });
    redis = createRedis(redisServer.url);
    // The outage is the point of the test: connection errors are expected, not reported.
    redis.on('error', () => undefined);
    const subscriber = createRedis(redisServer.url);
    subscriber.on('error', () => undefined);
    bans = await startBanCache(redis, { prefix: 'bans', refreshMs: 200, logger: silent });
    instance = await startLiveInstance({
      storage: suite.storage,
      redis,
      subscriber: subscriber,
      bans,
      streamsPerUser: 5,
    });
    base = instance.base;
  });
  after(async () => {
    await instance?.close();
    bans?.stop();
    redis?.disconnect();
    await redisServer?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stays open, and catches up from the database on a record written meanwhile once Redis is back', async () => {
    const user = 'u-out';
    const stream = await openSse(`${base}/notifications/v3/stream`, { Authorization: await bearer(user) });
    await stream.next(named('unread'));

    await redisServer.stop();
    // A worker's job applied while Redis is away: stored, but its announcement is lost.
    const publisher = createChangePublisher(redis, 'live', silent);
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
        onWritten: publisher.recordsWritten,
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(stream.events.filter(named('record'))).to.deep.equal([]);

    redisServer = await startRedis({ dir: join(dir, 'redis'), port, persistent: true });
    const caught = await stream.next(named('record'), { timeoutMs: 15_000 });
    expect(dataOf<NotificationRecord>(caught).targetId).to.equal('p-out');
    await stream.next(
      (event) =>
        event.event === 'unread' && dataOf<{ totalUnreadCount: number }>(event).totalUnreadCount === 1,
    );
    stream.close();
  });
});
