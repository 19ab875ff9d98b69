import { expect } from 'chai';
import express from 'express';
import request from 'supertest';
import { errorMiddleware, notFound } from '../../../shared/http/error-middleware.ts';
import { createMetricsRegistry, createMetricsRouter } from '../../../shared/http/metrics-router.ts';
import type { MetricsAccess } from '../../../shared/http/metrics-access.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const TOKEN = 'metrics-token-of-at-least-32-characters';

function appWith(access: MetricsAccess) {
  const app = express();
  app.use(createMetricsRouter(createMetricsRegistry('test', false), access));
  app.use(notFound);
  app.use(errorMiddleware(logger));
  return app;
}

describe('metrics router', () => {
  it('without METRICS_TOKEN (metrics off on this port) answers 404, as for any unknown path', async () => {
    const res = await request(appWith({ kind: 'off' }))
      .get('/metrics')
      .expect(404);
    expect(res.body).to.deep.equal({ status: 'error', code: 404000, message: 'no route for GET /metrics' });
  });

  it('with METRICS_TOKEN answers 401 without the token or with a wrong one', async () => {
    const app = appWith({ kind: 'token', token: TOKEN });
    const missing = await request(app).get('/metrics').expect(401);
    expect(missing.body).to.include({ status: 'error', code: 401000 });
    expect(missing.headers['www-authenticate']).to.equal('Bearer');
    await request(app).get('/metrics').set('Authorization', `Bearer ${TOKEN}x`).expect(401);
    await request(app).get('/metrics').set('Authorization', `Basic ${TOKEN}`).expect(401);
  });

  it('with METRICS_TOKEN answers another method 405 naming GET and HEAD', async () => {
    const res = await request(appWith({ kind: 'token', token: TOKEN }))
      .post('/metrics')
      .expect(405);
    expect(res.headers.allow).to.equal('GET, HEAD');
  });

  it('with METRICS_TOKEN serves the metrics to the bearer of the token', async () => {
    const res = await request(appWith({ kind: 'token', token: TOKEN }))
      .get('/metrics')
      .set('Authorization', `Bearer ${TOKEN}`)
      .expect(200);
    expect(res.headers['content-type']).to.match(/^text\/plain/);
  });

  // The scheme is case-insensitive (RFC 9110): `bearer <token>` was refused here while the tray's
  // failed-login count read the same header as a wrong token.
  it('with METRICS_TOKEN reads the scheme in any case and spaces around the token', async () => {
    for (const header of [`bearer ${TOKEN}`, `BEARER  ${TOKEN}`, `Bearer ${TOKEN} `]) {
      await request(appWith({ kind: 'token', token: TOKEN }))
        .get('/metrics')
        .set('Authorization', header)
        .expect(200);
    }
  });

  it('open (the loopback METRICS_PORT listener) serves anyone who can connect', async () => {
    await request(appWith({ kind: 'open' }))
      .get('/metrics')
      .expect(200);
  });
});
