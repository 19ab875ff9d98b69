import { expect } from 'chai';
import express from 'express';
import request from 'supertest';
import { errorMiddleware, notFound } from '../../../shared/http/error-middleware.ts';
import { createHealthRouter, type ReadinessChecks } from '../../../shared/http/health-router.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';

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

  it('GET /readyz reports a hung check as timed out within its deadline', async () => {
    const app = express().use(
      createHealthRouter({ hung: () => new Promise(() => undefined) }, { logger, timeoutMs: 50 }),
    );
    const res = await request(app).get('/readyz').expect(503);
    expect(res.body.checks.hung).to.deep.equal({ ok: false, reason: 'timed out' });
  });
});
