import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { startRedis, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import { createMetricsRegistry } from '../../../shared/http/metrics-router.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createRedis, type RedisClient } from '../../../shared/redis/create-redis.ts';
import { createLiveTray, type LiveTray } from '../../../tray-service/live/create-live-tray.ts';
import { startBanCache, type BanCache } from '../../../tray-service/http/auth/ban-cache.ts';
import { createMessageRenderer } from '../../../tray-service/messages/create-message-renderer.ts';
import { uniqueName } from '../../support/suite-resources.ts';
import { bearer, useTrayApi } from '../api/support/api-harness.ts';

// Tickets and stream places live in Redis: while it cannot be reached, asking for a ticket or
// opening a stream is "try again later" (503 with Retry-After, which the client waits out), as a
// call without the database is, not a 500 "internal error".
describe('the live tray while its Redis is unreachable', function () {
  this.timeout(60_000);
  const api = useTrayApi();
  const silent = createLogger({ name: 'test', level: 'silent' });
  let dir: string;
  let redis: LocalServer;
  let clients: RedisClient[];
  let live: LiveTray;
  let bans: BanCache;
  before(async () => {
    bans = await startBanCache(api.redis, { prefix: api.banPrefix, refreshMs: 60_000, logger: silent });
    dir = mkdtempSync(join(tmpdir(), 'live-redis-'));
    redis = await startRedis({ dir });
    clients = [createRedis(redis.url), createRedis(redis.url)];
    // The outage's connection errors, which the live tray's own listeners report.
    for (const client of clients) client.on('error', () => undefined);
    live = createLiveTray({
      storage: api.storage,
      redis: clients[0]!,
      subscriber: clients[1]!,
      prefix: uniqueName('live'),
      streamsPerUser: 5,
      messages: createMessageRenderer({ defaultLocale: 'en' }),
      bans,
      logger: silent,
      registry: createMetricsRegistry('tray-service', false),
    });
  });
  after(async () => {
    await live.hub.close(1_000);
    bans.stop();
    for (const client of clients) client.disconnect();
    await redis.stop('SIGKILL').catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a ticket request and a stream opened with a token 503 with Retry-After', async () => {
    const app = api.app({ live, bans });
    const auth = await bearer('u-outage');
    await request(app).post('/notifications/v3/stream-ticket').set('Authorization', auth).expect(201);
    await redis.stop();
    for (const call of [
      request(app).post('/notifications/v3/stream-ticket').set('Authorization', auth),
      request(app).get('/notifications/v3/stream').set('Authorization', auth),
    ]) {
      const res = await call;
      expect(res.status, call.url).to.equal(503);
      expect(res.body).to.include({ status: 'error', code: 503000 });
      expect(res.body.message, call.url).to.equal('Redis is unavailable, try again later');
      expect(res.headers['retry-after'], call.url).to.equal('5');
    }
  });
});
