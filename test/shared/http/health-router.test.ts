import { expect } from 'chai';
import express from 'express';
import { Registry } from 'prom-client';
import request from 'supertest';
import { errorMiddleware, notFound } from '../../../shared/http/error-middleware.ts';
import { createHealthRouter, type ReadinessChecks } from '../../../shared/http/health-router.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { recordingLogger } from '../../support/recording-logger.ts';

const logger = createLogger({ name: 'test', level: 'silent' });

function appWith(checks: ReadinessChecks) {
  const app = express();
  app.use(createHealthRouter(checks, { logger }));
  app.use(notFound);
  app.use(errorMiddleware(logger));
  return app;
}

describe('health router', () => {
  it('answers another method 405 naming GET and HEAD, not 404 as if the path did not exist', async () => {
    const app = appWith({});
    for (const path of ['/healthz', '/readyz']) {
      const res = await request(app).post(path).expect(405);
      expect(res.headers.allow, path).to.equal('GET, HEAD');
      expect(res.body.code).to.equal(405000);
    }
  });

  it('GET /healthz runs no check', async () => {
    let runs = 0;
    const app = appWith({ redis: async () => (runs++, { ok: true }) });
    await request(app).get('/healthz').expect(200, { status: 'ok' });
    expect(runs).to.equal(0);
  });

  it('GET /readyz runs each check at most once a second, however many requests arrive', async () => {
    let runs = 0;
    const app = appWith({
      slow: async () => {
        runs += 1;
        await new Promise((resolve) => setTimeout(resolve, 50));
        return { ok: true };
      },
    });
    const flood = await Promise.all(Array.from({ length: 100 }, () => request(app).get('/readyz')));
    expect(flood.every((res) => res.status === 200)).to.equal(true);
    for (let i = 0; i < 20; i += 1) await request(app).get('/readyz').expect(200);
    expect(runs).to.equal(1);
    await new Promise((resolve) => setTimeout(resolve, 1_050));
    await request(app).get('/readyz').expect(200);
    expect(runs).to.equal(2);
  });

  it('GET /readyz names a failing check without its error text', async () => {
    const app = appWith({
      redis: async () => {
        throw new Error('connect ECONNREFUSED 10.1.2.3:6379 (password hunter2)');
      },
      mongodb: async () => ({ ok: true }),
      spool: async () => ({ ok: false, error: 'EACCES on /var/spool/receiver', detail: { depth: 3 } }),
    });
    const res = await request(app).get('/readyz').expect(503);
    expect(res.body).to.deep.equal({
      status: 'unavailable',
      checks: {
        redis: { ok: false, reason: 'failed' },
        mongodb: { ok: true },
        spool: { ok: false, reason: 'failed', detail: { depth: 3 } },
      },
    });
    expect(res.text).to.not.match(/ECONNREFUSED|10\.1\.2\.3|hunter2|EACCES|\/var\/spool/);
  });

  // As every other 5xx (docs/operations.md): an operator finds the one line a report's id names.
  it('GET /readyz answers 503 with an X-Request-Id its log line names, at most one line per 10 s', async () => {
    const recorded = recordingLogger();
    const app = express().use(
      createHealthRouter(
        { postgres: async () => ({ ok: false, error: 'down' }), redis: async () => ({ ok: true }) },
        { logger: recorded.logger, cacheMs: 0 },
      ),
    );
    const first = await request(app).get('/readyz').set('X-Request-Id', 'lb-7f3a').expect(503);
    expect(first.headers['x-request-id']).to.equal('lb-7f3a');
    const second = await request(app).get('/readyz').expect(503);
    expect(second.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/);
    const answered = recorded.lines.filter((line) => line.msg === 'readiness answered 503');
    expect(answered).to.have.length(1);
    expect(answered[0]).to.deep.include({ requestId: 'lb-7f3a', failed: ['postgres'], unsaidBefore: 0 });
    await request(app).get('/healthz').expect(200);
    expect((await request(app).get('/readyz').expect(503)).headers).to.have.property('x-request-id');
  });

  it('GET /readyz reports a hung check as timed out within its deadline', async () => {
    const app = express().use(
      createHealthRouter({ hung: () => new Promise(() => undefined) }, { logger, timeoutMs: 50 }),
    );
    const res = await request(app).get('/readyz').expect(503);
    expect(res.body.checks.hung).to.deep.equal({ ok: false, reason: 'timed out' });
  });

  describe('a check the service serves without (degradeOnly)', () => {
    const failing = async () => ({ ok: false as const, error: 'down' });
    const passing = async () => ({ ok: true as const });
    const app = (checks: ReadinessChecks, registry?: Registry) =>
      express().use(
        createHealthRouter(checks, { logger, degradeOnly: ['redis'], ...(registry ? { registry } : {}) }),
      );

    it('failing alone leaves the service ready, degraded, with 200', async () => {
      const res = await request(app({ storage: passing, redis: failing }))
        .get('/readyz')
        .expect(200);
      expect(res.body).to.deep.equal({
        status: 'degraded',
        checks: { storage: { ok: true }, redis: { ok: false, reason: 'failed' } },
      });
      const hung = app({ redis: () => new Promise(() => undefined) });
      expect((await request(hung).get('/readyz').expect(200)).body.status).to.equal('degraded');
    });

    it('failing beside another check is unavailable, 503', async () => {
      const res = await request(app({ storage: failing, redis: failing }))
        .get('/readyz')
        .expect(503);
      expect(res.body.status).to.equal('unavailable');
      await request(app({ storage: passing, redis: passing }))
        .get('/readyz')
        .expect(200, { status: 'ready', checks: { storage: { ok: true }, redis: { ok: true } } });
    });

    it('shows each check in readiness_check_ok, so a degraded service can be alerted on', async () => {
      const registry = new Registry();
      let redisUp = false;
      app(
        { storage: passing, redis: async () => (redisUp ? { ok: true } : { ok: false, error: 'down' }) },
        registry,
      );
      const sample = async (check: string) =>
        (await registry.getSingleMetric('readiness_check_ok')!.get()).values.find(
          (value) => value.labels.check === check,
        )?.value;
      expect(await sample('storage')).to.equal(1);
      expect(await sample('redis')).to.equal(0);
      redisUp = true;
      // One readiness result is served for a second, to probes and scrapes alike.
      await new Promise((resolve) => setTimeout(resolve, 1_050));
      expect(await sample('redis')).to.equal(1);
    });
  });
});
