import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { startRedisCluster, type LocalRedisCluster } from '../../../scripts/lib/redis-cluster.ts';
import { resolveJwtConfig } from '../../../shared/config/tray-api-config.ts';
import { closeServer, listen } from '../../../shared/http/listen.ts';
import { createMetricsRegistry } from '../../../shared/http/metrics-router.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createRedis, type RedisClient } from '../../../shared/redis/create-redis.ts';
import { startBanCache, type BanCache } from '../../../tray-service/api/auth/ban-cache.ts';
import { createTokenVerifier } from '../../../tray-service/api/auth/create-token-verifier.ts';
import { createTrayApi } from '../../../tray-service/api/create-tray-api.ts';
import { createRateLimiter } from '../../../tray-service/api/rate-limit/create-rate-limiter.ts';
import type { NotificationRecord } from '../../../tray-service/api/tray/to-notification-record.ts';
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

describe('live tray on a Redis Cluster (ioredis Cluster client)', function () {
  this.timeout(60_000);
  const mongo = useMongo();
  let dir: string;
  let cluster: LocalRedisCluster;
  const clients: RedisClient[] = [];
  let bans: BanCache;
  let live: LiveTray;
  let server: Server;
  let base: string;
  const connect = () => {
    const client = createRedis({
      clusterNodes: cluster.nodes.map((node) => ({ host: '127.0.0.1', port: node.port })),
    });
    client.on('error', () => undefined);
    clients.push(client);
    return client;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'live-cluster-'));
    cluster = await startRedisCluster({ dir });
    await ensureTestCollections(mongo.db, trayCollections);
    const redis = connect();
    bans = await startBanCache(redis, { prefix: '{bans}', refreshMs: 200, logger: silent });
    const registry = createMetricsRegistry('tray-service', false);
    const messages = createMessageRenderer({ defaultLocale: 'en' });
    live = createLiveTray({
      db: mongo.db,
      redis,
      subscriber: connect(),
      prefix: 'live',
      streamsPerUser: 1,
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
    for (const client of clients) client.disconnect();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('opens a stream with a ticket, enforces the stream limit and delivers a published record', async () => {
    const user = 'u-cluster';
    const issued = await request(base)
      .post('/notifications/v3/stream-ticket')
      .set('Authorization', await bearer(user));
    expect(issued.status).to.equal(201);
    const stream = await openSse(
      `${base}/notifications/v3/stream?ticket=${issued.body.data.ticket as string}`,
    );
    expect(stream.status).to.equal(200);
    await stream.next(named('unread'));
    expect(
      (
        await request(base)
          .get('/notifications/v3/stream')
          .set('Authorization', await bearer(user))
      ).status,
    ).to.equal(429);

    const publisher = createChangePublisher(connect(), 'live', silent);
    await processJob(
      mongo.db,
      jobDataOf(commentEvent({ postId: 'p-cl', postOwner: user, author: 'u-cid', createdAt: minute(1) })),
      {
        eventsRetentionDays: 30,
        trayRetentionDays: 90,
        fanOutBatch: 100,
        onRecordsWritten: publisher.recordsWritten,
      },
    );
    const record = await stream.next(named('record'));
    expect(dataOf<NotificationRecord>(record).targetId).to.equal('p-cl');
    stream.close();
  });
});
