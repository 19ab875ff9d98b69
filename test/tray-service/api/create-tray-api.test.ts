import { expect } from 'chai';
import request from 'supertest';
import { helmetHeaders } from '../../../shared/http/helmet-headers.ts';
import { pageHelmetOptions } from '../../../shared/http/security-headers.ts';
import { demoRoutes } from '../../../tray-service/demo/demo-routes.ts';
import { createMessageRenderer } from '../../../tray-service/messages/create-message-renderer.ts';
import type { TrayStorage } from '../../../tray-service/storage/port.ts';
import { bearer, useTrayApi } from './support/api-harness.ts';
import { servedRoutes } from './support/served-routes.ts';
import { seedRecords } from '../../support/seed-tray.ts';
import { useStoppablePostgres } from '../../support/use-stoppable-postgres.ts';

describe('tray API (operations)', () => {
  const api = useTrayApi();

  it('GET /healthz answers 200 { status: "ok" }', async () => {
    const res = await request(api.app()).get('/healthz').expect(200);
    expect(res.body).to.deep.equal({ status: 'ok' });
  });

  it('GET /readyz reports the storage (naming its engine) and Redis reachable', async () => {
    const res = await request(api.app()).get('/readyz').expect(200);
    expect(res.body.checks).to.deep.equal({
      storage: { ok: true, detail: { engine: api.storage.engine } },
      redis: { ok: true },
    });
  });

  it('GET /metrics counts requests and latency by route, unknown paths folded into "unmatched"', async () => {
    const app = api.app();
    await request(app)
      .get('/notifications/v3')
      .set('Authorization', await bearer('metrics-user'))
      .expect(200);
    await request(app).get('/no/such/path/123').expect(404);
    // The probes are served routes of their own, not the unmatched traffic an operator watches.
    await request(app).get('/healthz').expect(200);
    await request(app).get('/metrics').expect(200);
    const res = await request(app).get('/metrics').expect(200);
    expect(res.text).to.match(
      /tray_api_requests_total\{method="GET",route="\/healthz",status="200"[^}]*\} 1/,
    );
    expect(res.text).to.match(
      /tray_api_requests_total\{method="GET",route="\/metrics",status="200"[^}]*\} 1/,
    );
    expect(res.text).not.to.match(/route="unmatched",status="200"/);
    expect(res.text).to.match(
      /tray_api_requests_total\{method="GET",route="\/notifications\/v3",status="200"[^}]*\} 1/,
    );
    expect(res.text).to.match(
      /tray_api_requests_total\{method="GET",route="unmatched",status="404"[^}]*\} 1/,
    );
    expect(res.text).to.include('tray_api_request_duration_seconds_bucket');
    expect(res.text).not.to.include('/no/such/path');
  });

  it("sends helmet's security headers with every answer: a tray call, an error, the OpenAPI document", async () => {
    const app = api.app();
    const answers = [
      await request(app)
        .get('/notifications/v3')
        .set('Authorization', await bearer('headers-user'))
        .expect(200),
      await request(app).get('/notifications/v3').expect(401),
      await request(app).get('/openapi.json').expect(200),
    ];
    // Over plain http, as supertest asks: helmet's defaults without upgrade-insecure-requests, with
    // the page's own styles only (below).
    const expected = helmetHeaders(pageHelmetOptions({ ownStylesOnly: true, plainHttp: true }));
    expect(expected.get('x-content-type-options')).to.equal('nosniff');
    for (const answer of answers) {
      for (const [name, value] of expected) expect(answer.headers[name], name).to.equal(value);
    }
  });

  it('tells caches to keep no answer of a tray or block call, errors included (Cache-Control: private, no-store)', async () => {
    const app = api.app();
    const auth = await bearer('cache-user');
    const calls = servedRoutes(app).filter((route) => / \/(notifications|block)\b/.test(route));
    expect(calls).to.include.members(['GET /notifications/v3/history', 'GET /block/members']);
    for (const call of calls) {
      const [method = '', path = ''] = call.split(' ');
      const test = request(app)[method.toLowerCase() as 'get' | 'post' | 'put' | 'delete'](path);
      for (const res of [await test.set('Authorization', auth), await request(app).get(path)]) {
        expect(res.headers['cache-control'], `${call}: ${res.status}`).to.equal('private, no-store');
      }
    }
    // The OpenAPI document is everyone's.
    expect((await request(app).get('/openapi.json')).headers['cache-control']).to.equal(undefined);
  });

  // `upgrade-insecure-requests` makes a browser fetch a page's scripts and calls over https: sent
  // by a listener reached over plain http (the demo page on a LAN address, TRAY_DEMO=on, no TLS
  // proxy), it sends them to an https port nobody serves. Over https (directly, or at a proxy
  // TRUST_PROXY trusts) it stays.
  describe('the Content-Security-Policy and https (the demo page and every answer)', () => {
    // A policy that is there, with or without the directive: an answer without one fails.
    const upgrades = (csp: unknown) => {
      expect(csp, 'Content-Security-Policy').to.be.a('string').that.includes("default-src 'self'");
      return String(csp)
        .split(';')
        .map((part) => part.trim())
        .includes('upgrade-insecure-requests');
    };
    /** The CSP of each answer, by path: the demo page, its script, the OpenAPI document, a 401. */
    const answers = async (trustProxy: string[], headers: Record<string, string>) => {
      const app = api.app({
        trustProxy,
        mounts: [demoRoutes(createMessageRenderer({ defaultLocale: 'en' }))],
      });
      const csp = async (path: string, status: number) =>
        [
          path,
          (await request(app).get(path).set(headers).expect(status)).headers['content-security-policy'],
        ] as const;
      return [
        await csp('/demo', 200),
        await csp('/demo/demo.js', 200),
        await csp('/openapi.json', 200),
        await csp('/notifications/v3', 401),
      ];
    };

    it('leaves upgrade-insecure-requests out over plain http, whatever the Host, and keeps the rest of the policy', async () => {
      for (const [path, csp] of await answers([], { Host: '192.168.1.20:8080' })) {
        expect(upgrades(csp), `${path}: ${csp}`).to.equal(false);
        expect(csp).to.include("default-src 'self'").and.include("script-src 'self'");
      }
    });

    // helmet's default lets any https site's stylesheet and fonts in, and inline styles: the demo
    // page has its own stylesheet only, and a markup injection could use CSS to read the page.
    it('allows its own stylesheets and fonts only, over http and https alike', async () => {
      for (const headers of [{}, { 'X-Forwarded-Proto': 'https' }] as Record<string, string>[])
        for (const [path, csp] of await answers(['loopback'], headers)) {
          const directives = String(csp)
            .split(';')
            .map((part) => part.trim());
          expect(directives, `${path}: ${csp}`).to.include("style-src 'self'").and.include("font-src 'self'");
          expect(String(csp), path).not.to.include('unsafe-inline');
        }
    });

    it('leaves it out when X-Forwarded-Proto: https comes from a proxy TRUST_PROXY does not list', async () => {
      for (const trustProxy of [[], ['10.1.2.3']])
        for (const [path, csp] of await answers(trustProxy, { 'X-Forwarded-Proto': 'https' }))
          expect(upgrades(csp), path).to.equal(false);
    });

    it('sends it when a trusted proxy says the browser came over https', async () => {
      for (const [path, csp] of await answers(['loopback'], { 'X-Forwarded-Proto': 'https' }))
        expect(upgrades(csp), path).to.equal(true);
      for (const [path, csp] of await answers(['loopback'], { 'X-Forwarded-Proto': 'http' }))
        expect(upgrades(csp), path).to.equal(false);
    });
  });

  it('answers an unknown path with 404 and the JSON error shape', async () => {
    const res = await request(api.app()).get('/notifications/v9').expect(404);
    expect(res.body).to.deep.equal({
      status: 'error',
      code: 404000,
      message: 'no route for GET /notifications/v9',
    });
  });

  describe('when the database is down', function () {
    this.timeout(60_000);
    const postgres = useStoppablePostgres();
    let storage: TrayStorage;
    before(async () => {
      storage = await postgres.openStorage();
      // The user has records: the page must come through the stopped server.
      await seedRecords(storage, [{ userId: 'u' }]);
      await postgres.stop();
    });

    it('answers tray calls with 503 and the JSON error shape, no details', async () => {
      const app = api.app({ storage });
      const res = await request(app)
        .get('/notifications/v3/history')
        .set('Authorization', await bearer('u'))
        .expect(503);
      expect(res.body).to.deep.equal({
        status: 'error',
        code: 503000,
        message: 'the database is unavailable, try again later',
      });
      await request(app)
        .post('/block')
        .set('Authorization', await bearer('u'))
        .send({})
        .expect(503);
    });

    it('GET /readyz answers 503 naming the storage', async () => {
      const res = await request(api.app({ storage })).get('/readyz').expect(503);
      expect(res.body.checks.storage.ok).to.equal(false);
      expect(res.body.checks.redis.ok).to.equal(true);
    });
  });

  describe('when a handler fails unexpectedly', () => {
    it('answers 500 without details or a stack trace', async () => {
      const app = api.app({
        messages: {
          locales: ['en'],
          defaultLocale: 'en',
          negotiate: () => 'en',
          render: () => {
            throw new Error('secret internals');
          },
        },
      });
      await seedRecords(api.storage, [{ userId: 'boom' }]);
      const res = await request(app)
        .get('/notifications/v3/history')
        .set('Authorization', await bearer('boom'))
        .expect(500);
      expect(res.body).to.deep.equal({ status: 'error', code: 500000, message: 'internal error' });
    });
  });
});
