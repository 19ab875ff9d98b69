import { expect } from 'chai';
import type { Express } from 'express';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { startRedis, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { createMemoryFailedAuthLimit } from '../../../shared/http/memory-failed-auth-limit.ts';
import { ADMIN_TOKEN, adminApp, sessionCookie } from './admin-fixtures.ts';

/** The directives of a Content-Security-Policy header, by name. */
/** The policy's directives by name; an answer without a policy fails (its absence is no pass). */
const directives = (csp: unknown) =>
  new Map(
    (expect(csp, 'Content-Security-Policy').to.be.a('string'), String(csp))
      .split(';')
      .map((part) => part.trim())
      .filter((part) => part !== '')
      .map((part) => [part.split(' ')[0] ?? '', part] as const),
  );

// `upgrade-insecure-requests` makes a browser fetch every sub-resource and call of the page over
// https. Sent by a listener the browser reached over plain http (an admin listener on a LAN address,
// no TLS proxy), it sends the sign-in form's post, the dashboard's scripts and the console's API
// calls to an https port nobody serves, and the admin pages break. Over https, directly or at a
// proxy the app trusts (ADMIN_TRUST_PROXY), it stays: it is then what keeps a stray http URL secure.
describe('createAdminApp: the pages’ Content-Security-Policy and https', () => {
  const suite = useTrayStorage();
  const opened: { close(): void }[] = [];
  after(() => {
    for (const app of opened.splice(0)) app.close();
  });
  const appTrusting = (trustProxy: false | string[]): Express => {
    const built = adminApp(suite.storage, { trustProxy });
    opened.push(built);
    return built.app;
  };
  /** The CSP of the sign-in page and of an admin JSON answer, as `app` sends them. */
  const policies = async (app: Express, headers: Record<string, string>) => [
    (await request(app).get('/admin/login').set(headers).expect(200)).headers['content-security-policy'],
    (
      await request(app)
        .get('/admin/events')
        .set({ ...headers, Authorization: `Bearer ${ADMIN_TOKEN}` })
        .expect(200)
    ).headers['content-security-policy'],
  ];

  it('leaves upgrade-insecure-requests out over plain http, whatever the Host, and keeps the rest of the policy', async () => {
    for (const csp of await policies(appTrusting(false), { Host: '192.168.1.20:8082' })) {
      const sent = directives(csp);
      expect(sent.has('upgrade-insecure-requests'), String(csp)).to.equal(false);
      expect(sent.get('default-src')).to.equal("default-src 'self'");
      expect(sent.get('script-src')).to.equal("script-src 'self'");
      expect(sent.get('frame-ancestors')).to.equal("frame-ancestors 'self'");
    }
  });

  it('leaves it out when X-Forwarded-Proto: https comes from a proxy the app does not trust', async () => {
    const forwarded = { Host: 'admin.example.org', 'X-Forwarded-Proto': 'https' };
    for (const trustProxy of [false, ['10.1.2.3']] as const)
      for (const csp of await policies(
        appTrusting(trustProxy === false ? false : [...trustProxy]),
        forwarded,
      ))
        expect(directives(csp).has('upgrade-insecure-requests'), String(csp)).to.equal(false);
  });

  it('sends it when a trusted proxy says the browser came over https (ADMIN_TRUST_PROXY)', async () => {
    const app = appTrusting(['loopback']);
    const forwarded = { Host: 'admin.example.org', 'X-Forwarded-Proto': 'https' };
    for (const csp of await policies(app, forwarded))
      expect(directives(csp).get('upgrade-insecure-requests'), String(csp)).to.equal(
        'upgrade-insecure-requests',
      );
    // The same proxy passing on a plain-http request: left out.
    for (const csp of await policies(app, { ...forwarded, 'X-Forwarded-Proto': 'http' }))
      expect(directives(csp).has('upgrade-insecure-requests'), String(csp)).to.equal(false);
  });
});

// A call that cannot be served without Redis (the session behind a cookie, a replay's progress)
// answers 503 with Retry-After, as one without the database does: not a 500 "internal error".
describe('createAdminApp while Redis is unreachable', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  let dir: string;
  let redis: LocalServer;
  let built: ReturnType<typeof adminApp>;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'admin-redis-'));
    redis = await startRedis({ dir });
    built = adminApp(suite.storage, { redisUrl: redis.url });
  });
  after(async () => {
    built.close();
    await redis.stop('SIGKILL').catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 with Retry-After to a session cookie and to the replays', async () => {
    const cookie = await sessionCookie(built.app);
    await request(built.app).get('/admin/events').set('Cookie', cookie).expect(200);
    const bearer = { Authorization: `Bearer ${ADMIN_TOKEN}` };
    await redis.stop();
    const calls = [
      request(built.app).get('/admin/events').set('Cookie', cookie),
      request(built.app).post('/admin/events/replay').set(bearer).send({ since: '2030-01-01' }),
      request(built.app).get('/admin/replays/00000000-0000-4000-8000-000000000000').set(bearer),
    ];
    for (const call of calls) {
      const res = await call;
      expect(res.status, call.url).to.equal(503);
      expect(res.body).to.deep.equal({
        status: 'error',
        code: 503000,
        message: 'Redis is unavailable, try again later',
      });
      expect(res.headers['retry-after']).to.equal('5');
    }
  });
});

// Every admin path answers a method it does not serve 405 with Allow, as the tray API does: a
// DELETE of an event, a GET of the replay endpoint (taken for an event key) or a POST of a console
// asset answered 404, which says the path is wrong when the method is.
describe('createAdminApp: a method a path does not serve', () => {
  const suite = useTrayStorage();
  let built: ReturnType<typeof adminApp>;
  before(() => {
    built = adminApp(suite.storage);
  });
  after(() => built.close());
  const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

  const cases: [method: 'delete' | 'get' | 'post' | 'put' | 'patch', path: string, allow: string][] = [
    ['delete', '/admin/events/some-key', 'GET, HEAD'],
    ['get', '/admin/events/replay', 'POST'],
    ['put', '/admin/events', 'GET, HEAD'],
    ['post', '/admin/events/tail', 'GET'],
    ['get', '/admin/events/some-key/replay', 'POST'],
    ['patch', '/admin/replays/some-id', 'GET, HEAD'],
    ['post', '/admin/console/assets/console.js', 'GET, HEAD'],
    ['post', '/admin/console', 'GET, HEAD'],
    ['put', '/admin/login', 'GET, HEAD, POST'],
    ['delete', '/admin/logout', 'GET, HEAD, POST'],
    ['post', '/admin/session', 'GET, HEAD'],
    ['delete', '/ADMIN/Stats/Lag/', 'GET, HEAD'],
  ];
  for (const [method, path, allow] of cases) {
    it(`${method.toUpperCase()} ${path}: 405, Allow: ${allow}`, async () => {
      const res = await request(built.app)[method](path).set(admin).expect(405);
      expect(res.headers.allow).to.equal(allow);
      expect(res.body).to.include({ status: 'error' });
      expect(res.body.message).to.equal(`method ${method.toUpperCase()} is not allowed here`);
    });
  }

  it('answers HEAD of the tail as its route does: 405, Allow: GET', async () => {
    const res = await request(built.app).head('/admin/events/tail').set(admin).expect(405);
    expect(res.headers.allow).to.equal('GET');
  });

  it('leaves the methods a path serves, and paths it does not know, as they were', async () => {
    await request(built.app).get('/admin/events').set(admin).expect(200);
    await request(built.app).head('/admin/stats/lag').set(admin).expect(200);
    await request(built.app).get('/admin/events/no-such-key').set(admin).expect(404);
    await request(built.app).delete('/admin/nothing-here').set(admin).expect(404);
    await request(built.app).get('/admin/login').expect(200);
  });
});

// DNS rebinding: a page whose site name is pointed at 127.0.0.1 has an operator's browser call the
// loopback admin listener as that site, same-origin to the browser; its wrong sign-ins, counted
// against 127.0.0.1, refused every operator reaching the admin from this machine or a tunnel.
describe('createAdminApp on loopback without a proxy (loopbackNamesOnly)', () => {
  const suite = useTrayStorage();
  const opened: { close(): void }[] = [];
  after(() => {
    for (const app of opened.splice(0)) app.close();
  });

  it('answers requests naming a loopback host, and refuses any other name with 403 before counting anything', async () => {
    const failedAuth = createMemoryFailedAuthLimit({ points: 2, windowMs: 60_000, maxAddresses: 100 });
    const built = adminApp(suite.storage, { deps: { loopbackNamesOnly: true, failedAuth } });
    opened.push(built);
    for (const host of ['localhost:8082', '127.0.0.1:8082', '[::1]:8082', 'LOCALHOST', '127.0.0.1'])
      await request(built.app)
        .get('/admin/events')
        .set({ Host: host, Authorization: `Bearer ${ADMIN_TOKEN}` })
        .expect(200);
    for (const host of ['rebind.example:8082', 'localhost.example', '10.0.0.1:8082', 'rebind.example']) {
      const refused = await request(built.app)
        .post('/admin/login')
        .type('form')
        .set({ Host: host })
        .send({ token: 'a-guess' })
        .expect(403);
      expect(refused.body).to.deep.include({ status: 'error', code: 403000 });
      expect(refused.body.message).to.include('localhost, 127.0.0.1 or [::1] only');
      expect(refused.headers['content-security-policy'], 'helmet’s headers').to.be.a('string');
    }
    // None of those counted as a failed sign-in (two are allowed here): the address is not refused.
    await request(built.app)
      .get('/admin/events')
      .set({ Host: 'localhost:8082', Authorization: `Bearer ${ADMIN_TOKEN}` })
      .expect(200);
  });
});
