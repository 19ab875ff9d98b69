import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startRedis, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import { resolveJwtConfig } from '../../../shared/config/tray-api-config.ts';
import { closeServer, listen } from '../../../shared/http/listen.ts';
import { createMetricsRegistry } from '../../../shared/http/metrics-router.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createRedis, type RedisClient } from '../../../shared/redis/create-redis.ts';
import type { NotificationRecord } from '../../../tray-service/api/tray/to-notification-record.ts';
import { startBanCache, type BanCache } from '../../../tray-service/api/auth/ban-cache.ts';
import { createTokenVerifier } from '../../../tray-service/api/auth/create-token-verifier.ts';
import { createTrayApi } from '../../../tray-service/api/create-tray-api.ts';
import { createRateLimiter } from '../../../tray-service/api/rate-limit/create-rate-limiter.ts';
import { createChangePublisher } from '../../../tray-service/live/change-publisher.ts';
import { createLiveTray, type LiveTray } from '../../../tray-service/live/create-live-tray.ts';
import { createMessageRenderer } from '../../../tray-service/messages/create-message-renderer.ts';
import { trayCollections } from '../../../tray-service/store/tray-collections.ts';
import { processJob } from '../../../tray-service/worker/process-job.ts';
import { ensureTestCollections } from '../../support/ensure-test-collections.ts';
import { useMongo } from '../../support/suite-resources.ts';
import { bearer, TEST_SECRET } from '../api/support/api-harness.ts';
import { commentEvent, minute } from '../worker/event-builder.ts';
import { jobDataOf } from '../worker/worker-harness.ts';
import { dataOf, named, openSse } from './support/sse-client.ts';

const silent = createLogger({ name: 'test', level: 'silent' });

// A Redis of its own: the test stops and restarts it.
describe('live stream while Redis is down', function () {
  this.timeout(60_000);
  const mongo = useMongo();
  let dir: string;
  let redisServer: LocalServer;
  let port: number;
  let redis: RedisClient;
  let bans: BanCache;
  let live: LiveTray;
  let server: Server;
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
    await ensureTestCollections(mongo.db, trayCollections);
    bans = await startBanCache(redis, { prefix: 'bans', refreshMs: 200, logger: silent });
    const registry = createMetricsRegistry('tray-service', false);
    const messages = createMessageRenderer({ defaultLocale: 'en' });
    live = createLiveTray({
      db: mongo.db,
      redis,
      subscriber,
      prefix: 'live',
      streamsPerUser: 5,
      messages,
      bans,
      logger: silent,
      registry,
    });
    const app = createTrayApi({
      logger: silent,
      db: mongo.db,
      redis,
      registry,
      verifyToken: createTokenVerifier(resolveJwtConfig({ JWT_SECRET: TEST_SECRET })),
      bans,
      rateLimiter: createRateLimiter({ redis, points: 1_000, windowMs: 60_000, keyPrefix: 'rl' }),
      messages,
      settings: { pageSize: 10, networkId: 'net1', blockApi: true },
      live,
    });
    server = await listen(app, { port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await live?.hub.close(1_000);
    if (server) await closeServer(server, 1_000);
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
    await processJob(
      mongo.db,
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
        eventsRetentionDays: 30,
        trayRetentionDays: 90,
        fanOutBatch: 100,
        onRecordsWritten: publisher.recordsWritten,
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
