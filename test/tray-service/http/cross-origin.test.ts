import { expect } from 'chai';
import request from 'supertest';
import type { CorsOrigins } from '../../../shared/config/cors-origins.ts';
import { bearer, useTrayApi } from '../api/support/api-harness.ts';

const PAGE = 'https://app.example.com';
const OTHER = 'https://evil.example.net';

/** CORS headers of the tray API (TRAY_CORS_ORIGINS), on the real app; a browser test is beside it. */
describe('the tray API called from web pages of other origins (TRAY_CORS_ORIGINS)', () => {
  const api = useTrayApi();
  const appWith = (corsOrigins?: CorsOrigins) =>
    api.app({
      settings: {
        pageSize: 10,
        networkId: 'net1',
        blockApi: true,
        retentionDays: 90,
        ...(corsOrigins === undefined ? {} : { corsOrigins }),
      },
    });
  const preflight = (app: ReturnType<typeof appWith>, origin: string, method = 'DELETE') =>
    request(app)
      .options('/notifications/v3/mutes')
      .set('Origin', origin)
      .set('Access-Control-Request-Method', method)
      .set('Access-Control-Request-Headers', 'authorization,content-type');
  const get = async (app: ReturnType<typeof appWith>, origin: string, path = '/notifications/v3') =>
    request(app)
      .get(path)
      .set('Origin', origin)
      .set('Authorization', await bearer('u-cors'));

  it('answers no origin by default: no CORS header, and a preflight meets the 405 of any OPTIONS', async () => {
    const app = appWith();
    const pre = await preflight(app, PAGE);
    expect(pre.status).to.equal(405);
    expect(pre.headers['access-control-allow-origin']).to.equal(undefined);
    const res = await get(app, PAGE);
    expect(res.status).to.equal(200);
    expect(res.headers['access-control-allow-origin']).to.equal(undefined);
  });

  it('lets a listed origin send what the client sends and read the answers, Retry-After and X-Request-Id included', async () => {
    const app = appWith([PAGE]);
    const pre = await preflight(app, PAGE);
    expect(pre.status).to.equal(204);
    expect(pre.headers).to.include({ 'access-control-allow-origin': PAGE, 'access-control-max-age': '600' });
    expect(pre.headers['access-control-allow-methods']).to.equal('GET,POST,PUT,DELETE');
    expect(pre.headers['access-control-allow-headers']).to.equal(
      'Authorization,Content-Type,Last-Event-ID,Accept-Language',
    );
    expect(pre.headers['access-control-allow-credentials']).to.equal(undefined);
    expect(pre.headers.vary).to.match(/Origin/);
    for (const path of ['/notifications/v3', '/block', '/openapi.json']) {
      const res = await get(app, PAGE, path);
      expect(res.headers['access-control-allow-origin'], path).to.equal(PAGE);
      expect(res.headers['access-control-expose-headers'], path).to.equal(
        'Retry-After,Date,X-RateLimit-Limit,X-RateLimit-Remaining,Deprecation,Sunset,X-Request-Id',
      );
      expect(res.headers.vary, path).to.match(/Origin/);
    }
    // A refusal too: the page reads why its call failed.
    const refused = await request(app).get('/notifications/v3').set('Origin', PAGE);
    expect([refused.status, refused.headers['access-control-allow-origin']]).to.deep.equal([401, PAGE]);
  });

  it('leaves every other origin as without CORS, and varies on Origin for caches between', async () => {
    const app = appWith([PAGE]);
    expect((await preflight(app, OTHER)).status).to.equal(405);
    const res = await get(app, OTHER);
    expect(res.headers['access-control-allow-origin']).to.equal(undefined);
    expect(res.headers.vary).to.match(/Origin/);
    // The probes are for operators, never for pages.
    const health = await request(app).get('/healthz').set('Origin', PAGE);
    expect(health.headers['access-control-allow-origin']).to.equal(undefined);
  });

  it('with *, lets any origin call, without credentials', async () => {
    const app = appWith('*');
    const pre = await preflight(app, OTHER, 'POST');
    expect([pre.status, pre.headers['access-control-allow-origin']]).to.deep.equal([204, '*']);
    expect((await get(app, OTHER)).headers['access-control-allow-origin']).to.equal('*');
  });
});
