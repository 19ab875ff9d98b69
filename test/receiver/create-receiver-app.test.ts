import { expect } from 'chai';
import request from 'supertest';
import { createReceiverApp } from '../../receiver/create-receiver-app.ts';
import { createMetricsRegistry } from '../../shared/http/metrics-router.ts';
import { createLogger } from '../../shared/logging/create-logger.ts';
import { createRedis } from '../../shared/redis/create-redis.ts';
import { testStack } from '../support/test-stack.ts';
import type { Redis } from 'ioredis';

describe('receiver app (operations)', () => {
  let redis: Redis;
  before(() => {
    redis = createRedis(testStack().redisUrl);
  });
  after(() => redis.disconnect());
  const app = () =>
    createReceiverApp({
      logger: createLogger({ name: 'test', level: 'silent' }),
      redis,
      registry: createMetricsRegistry('receiver', false),
    });

  it('GET /healthz answers 200 { status: "ok" }', async () => {
    const res = await request(app()).get('/healthz').expect(200);
    expect(res.body).to.deep.equal({ status: 'ok' });
  });

  it('GET /readyz reports Redis reachable', async () => {
    const res = await request(app()).get('/readyz').expect(200);
    expect(res.body).to.deep.include({ status: 'ready' });
    expect(res.body.checks.redis).to.deep.equal({ ok: true });
  });

  it('answers an unknown path with 404 and the JSON error shape', async () => {
    const res = await request(app()).get('/nope').expect(404);
    expect(res.body).to.deep.equal({ status: 'error', code: 404000, message: 'no route for GET /nope' });
    expect(res.headers).not.to.have.property('x-powered-by');
  });
});
