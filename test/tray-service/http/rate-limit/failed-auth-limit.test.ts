import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { createLogger } from '../../../../shared/logging/create-logger.ts';
import { createFailedAuthLimit } from '../../../../tray-service/http/rate-limit/failed-auth-limit.ts';
import { uniqueName } from '../../../support/suite-resources.ts';
import { bearer, expiringToken, tokenFor, useTrayApi } from '../../api/support/api-harness.ts';
import { expectMatchesOpenApi } from '../../api/support/openapi-validator.ts';
import { parseCidrList } from '../../../../shared/address/parse-cidr.ts';
import { ADMIN_TOKEN } from '../../admin/admin-fixtures.ts';
import { ADMIN_SESSION_COOKIE } from '../../../../tray-service/admin/session-cookie.ts';
import { createAdminApp } from '../../../../tray-service/admin/create-admin-app.ts';
import type { TrayApiDeps } from '../../../../tray-service/api/create-tray-api.ts';
import { startBanCache } from '../../../../tray-service/http/auth/ban-cache.ts';
import { createOpsApp } from '../../../../shared/http/create-ops-app.ts';
import { metricsAccessFor } from '../../../../shared/http/metrics-access.ts';
import { Registry } from 'prom-client';
import { banKeys } from '../../../../tray-service/bans/ban-keys.ts';

const LIMIT = 5;
const forged = 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtYWxsb3J5In0.forged-signature-xxxxxxxxxxxxxxxxxxxx';

/** The 429 of an address over its limit: the project's JSON error shape and a Retry-After. */
function expectRefused(res: request.Response) {
  expect(res.status).to.equal(429);
  expect(res.body).to.deep.equal({
    status: 'error',
    code: 400311,
    message: 'too many failed authentication attempts from this address; try again later',
  });
  expect(Number(res.headers['retry-after'])).to.be.within(1, 60);
}

describe('failed authentications per source address (AUTH_FAILURE_LIMIT)', () => {
  const api = useTrayApi();
  const logger = createLogger({ name: 'test', level: 'silent' });
  /** An app behind a proxy on loopback, so each test names its client's address in X-Forwarded-For. */
  const appWith = (keyPrefix: string, extra: Partial<TrayApiDeps> = {}): Express =>
    api.app({
      failedAuth: createFailedAuthLimit({ redis: api.redis, points: LIMIT, windowMs: 60_000, keyPrefix }),
      trustProxy: ['loopback'],
      ...extra,
    });

  // As documented: LIMIT failures are allowed, the next one refuses the address.
  it('serves an address that failed LIMIT times, and refuses it with 429 from its next failure on, even with a valid token', async () => {
    const app = appWith(uniqueName('auth'));
    const from = '198.51.100.7';
    for (let i = 0; i < LIMIT; i += 1) {
      await request(app)
        .get('/notifications/v3')
        .set('X-Forwarded-For', from)
        .set('Authorization', forged)
        .expect(401);
    }
    await request(app)
      .get('/notifications/v3')
      .set('X-Forwarded-For', from)
      .set('Authorization', await bearer('u-honest'))
      .expect(200);
    // The failure past the limit is answered as the failure it is; the refusal starts there.
    await request(app)
      .get('/notifications/v3')
      .set('X-Forwarded-For', from)
      .set('Authorization', forged)
      .expect(401);
    const valid = await request(app)
      .get('/notifications/v3')
      .set('X-Forwarded-For', from)
      .set('Authorization', await bearer('u-honest'));
    expectRefused(valid);
  });

  it('refuses with the headers every tray and block answer carries (no-store; the block list its deprecation)', async () => {
    const app = appWith(uniqueName('auth'));
    const from = '198.51.100.8';
    for (let i = 0; i <= LIMIT; i += 1)
      await request(app).get('/notifications/v3').set('X-Forwarded-For', from).set('Authorization', forged);
    const tray = await request(app)
      .get('/notifications/v3')
      .set('X-Forwarded-For', from)
      .set('Authorization', await bearer('u-honest'));
    expectRefused(tray);
    expect(tray.headers['cache-control']).to.equal('private, no-store');
    const block = await request(app)
      .post('/block/members')
      .set('X-Forwarded-For', from)
      .set('Authorization', await bearer('u-honest'))
      .send({ checkList: ['u-x'] });
    expectRefused(block);
    expect(block.headers['cache-control']).to.equal('private, no-store');
    expect(block.headers).to.include.keys('deprecation', 'sunset');
  });

  it('does not refuse other addresses, nor the probes', async () => {
    const app = appWith(uniqueName('auth'));
    for (let i = 0; i <= LIMIT; i += 1) {
      await request(app)
        .get('/notifications/v3')
        .set('X-Forwarded-For', '198.51.100.8')
        .set('Authorization', forged);
    }
    await request(app)
      .get('/notifications/v3')
      .set('X-Forwarded-For', '198.51.100.9')
      .set('Authorization', await bearer('u-other'))
      .expect(200);
    await request(app).get('/healthz').set('X-Forwarded-For', '198.51.100.8').expect(200);
  });

  // Another site's page can make a visitor's browser call without a credential (an image, an
  // EventSource with a made-up ticket), and an app back end relays its users' expired tokens from
  // one address: none of these is a guess, and counting them let either lock an address out.
  it('does not count calls without a token, nor expired tokens that verified (tickets: stream-ticket-guessing)', async () => {
    const app = appWith(uniqueName('auth'));
    const from = '198.51.100.30';
    const expired = `Bearer ${await expiringToken('u-late', -120)}`;
    for (let i = 0; i <= LIMIT * 2; i += 1) {
      const calls = [
        request(app).get('/notifications/v3').set('X-Forwarded-For', from),
        request(app).get('/notifications/v3').set('X-Forwarded-For', from).set('Authorization', expired),
      ];
      for (const call of calls) expect((await call).status).to.equal(401);
    }
    await request(app)
      .get('/notifications/v3')
      .set('X-Forwarded-For', from)
      .set('Authorization', await bearer('u-honest'))
      .expect(200);
  });

  // jose checks the claims only once the signature verified: such a token was issued by the real
  // key, and an issuer whose clock runs ahead (nbf a moment away) would otherwise lock out the back
  // end relaying its users' fresh tokens.
  it('does not count tokens whose signature verified but whose claims are refused (not yet valid, no user named)', async () => {
    const app = appWith(uniqueName('auth'));
    const from = '198.51.100.31';
    const early = `Bearer ${await tokenFor('u-early', { nbf: Math.floor(Date.now() / 1000) + 120 })}`;
    const nobody = `Bearer ${await tokenFor('')}`;
    for (let i = 0; i <= LIMIT * 2; i += 1) {
      for (const token of [early, nobody]) {
        const res = await request(app)
          .get('/notifications/v3')
          .set('X-Forwarded-For', from)
          .set('Authorization', token);
        expect(res.status, res.body.message).to.equal(401);
      }
    }
    await request(app)
      .get('/notifications/v3')
      .set('X-Forwarded-For', from)
      .set('Authorization', await bearer('u-honest'))
      .expect(200);
  });

  // An app back end relays its users' tokens from one address: one user sending forged tokens
  // through it would otherwise have it refused, and every user behind it with it.
  it('never counts nor refuses an address of AUTH_FAILURE_EXEMPT, and still refuses the others', async () => {
    const keyPrefix = uniqueName('auth');
    const app = api.app({
      failedAuth: createFailedAuthLimit({
        redis: api.redis,
        points: LIMIT,
        windowMs: 60_000,
        keyPrefix,
        exempt: parseCidrList('203.0.113.0/28, 2001:db8::/64'),
      }),
      trustProxy: ['loopback'],
    });
    for (const backEnd of ['203.0.113.9', '2001:db8::7']) {
      for (let i = 0; i <= LIMIT * 2; i += 1) {
        await request(app)
          .get('/notifications/v3')
          .set('X-Forwarded-For', backEnd)
          .set('Authorization', forged)
          .expect(401);
      }
      await request(app)
        .get('/notifications/v3')
        .set('X-Forwarded-For', backEnd)
        .set('Authorization', await bearer('u-behind-the-back-end'))
        .expect(200);
    }
    const outside = '203.0.113.16';
    for (let i = 0; i <= LIMIT; i += 1) {
      const res = await request(app)
        .get('/notifications/v3')
        .set('X-Forwarded-For', outside)
        .set('Authorization', forged);
      expect(res.status).to.be.oneOf([401, 429]);
    }
    expectRefused(
      await request(app)
        .get('/notifications/v3')
        .set('X-Forwarded-For', outside)
        .set('Authorization', await bearer('u-outside')),
    );
  });

  // IPv6 addresses are counted by their /64: a neighbour of an exempt address, refused, refused
  // the exempt one with it, where the exemption promises it is never refused.
  it('never refuses an exempt IPv6 address for the failures of another of its /64', async () => {
    const app = api.app({
      failedAuth: createFailedAuthLimit({
        redis: api.redis,
        points: LIMIT,
        windowMs: 60_000,
        keyPrefix: uniqueName('auth'),
        exempt: parseCidrList('2001:db8::10'),
      }),
      trustProxy: ['loopback'],
    });
    for (let i = 0; i <= LIMIT; i += 1) {
      const res = await request(app)
        .get('/notifications/v3')
        .set('X-Forwarded-For', '2001:db8::11')
        .set('Authorization', forged);
      expect(res.status).to.be.oneOf([401, 429]);
    }
    expectRefused(
      await request(app)
        .get('/notifications/v3')
        .set('X-Forwarded-For', '2001:db8::11')
        .set('Authorization', await bearer('u-neighbour')),
    );
    await request(app)
      .get('/notifications/v3')
      .set('X-Forwarded-For', '2001:db8::10')
      .set('Authorization', await bearer('u-behind-the-back-end'))
      .expect(200);
  });

  it("does not count a banned user's valid token: their calls never refuse the others at their address", async () => {
    // A ban published in Redis as the worker does, and a ban cache that loaded it.
    const banPrefix = uniqueName('bans');
    const keys = banKeys(banPrefix);
    await api.redis.sadd(keys.banned, 'u-banned');
    await api.redis.incr(keys.version);
    const bans = await startBanCache(api.redis, { prefix: banPrefix, refreshMs: 60_000, logger });
    try {
      // An app back end calling for all its users from one address.
      const app = appWith(uniqueName('auth'), { bans });
      const from = '198.51.100.20';
      for (let i = 0; i <= LIMIT * 4; i += 1) {
        const res = await request(app)
          .get('/notifications/v3')
          .set('X-Forwarded-For', from)
          .set('Authorization', await bearer('u-banned'));
        expect(res.status).to.equal(401);
        expect(res.body.code).to.equal(401001);
      }
      await request(app)
        .get('/notifications/v3')
        .set('X-Forwarded-For', from)
        .set('Authorization', await bearer('u-honest'))
        .expect(200);
      // Forged tokens from that address are still counted, and refused once over the limit.
      for (let i = 0; i <= LIMIT; i += 1) {
        await request(app).get('/notifications/v3').set('X-Forwarded-For', from).set('Authorization', forged);
      }
      expectRefused(
        await request(app)
          .get('/notifications/v3')
          .set('X-Forwarded-For', from)
          .set('Authorization', await bearer('u-honest')),
      );
    } finally {
      bans.stop();
    }
  });

  // METRICS_TOKEN may hold any character but a space, as /metrics reads it; the count read only
  // a JWT's alphabet, so guesses holding others (`!`, `#`, `%`...) were never counted.
  it('refuses METRICS_TOKEN guesses like any other once the address is over the limit, whatever their characters', async () => {
    const metricsToken = `metrics-${'m'.repeat(32)}`;
    const app = appWith(uniqueName('auth'), { metrics: { kind: 'token', token: metricsToken } });
    const from = '198.51.100.21';
    for (let i = 0; i < LIMIT; i += 1) {
      await request(app)
        .get('/metrics')
        .set('X-Forwarded-For', from)
        .set('Authorization', `Bearer guess!${i}#${'x'.repeat(32)}`)
        .expect(401);
    }
    await request(app).get('/metrics').set('X-Forwarded-For', from).set('Authorization', 'Bearer guess');
    // No more guesses are answered, not even the right token, for a window; nor this document.
    const refused = await request(app)
      .get('/metrics')
      .set('X-Forwarded-For', from)
      .set('Authorization', `Bearer ${metricsToken}`);
    expectRefused(refused);
    expectMatchesOpenApi(refused, 'GET', '/metrics');
    const document = await request(app).get('/openapi.json').set('X-Forwarded-For', from);
    expectRefused(document);
    expectMatchesOpenApi(document, 'GET', '/openapi.json');
    await request(app)
      .get('/metrics')
      .set('X-Forwarded-For', '198.51.100.22')
      .set('Authorization', `Bearer ${metricsToken}`)
      .expect(200);
  });

  const metricsToken = `metrics-${'w'.repeat(32)}`;
  /** A worker-only process's ops app, with its own count, behind a proxy on loopback. */
  const opsApp = () =>
    createOpsApp({
      registry: new Registry(),
      logger,
      metrics: metricsAccessFor(metricsToken),
      checks: {},
      failedAuth: {
        limit: createFailedAuthLimit({
          redis: api.redis,
          points: LIMIT,
          windowMs: 60_000,
          keyPrefix: uniqueName('ops'),
        }),
        trustProxy: ['loopback'],
      },
    });

  it('on a worker-only process (the ops app), counts and refuses METRICS_TOKEN guesses too, never the probes', async () => {
    const app = opsApp();
    const from = '198.51.100.31';
    for (let i = 0; i <= LIMIT; i += 1)
      await request(app)
        .get('/metrics')
        .set('X-Forwarded-For', from)
        .set('Authorization', `Bearer guess-${i}`);
    expectRefused(
      await request(app)
        .get('/metrics')
        .set('X-Forwarded-For', from)
        .set('Authorization', `Bearer ${metricsToken}`),
    );
    await request(app).get('/healthz').set('X-Forwarded-For', from).expect(200);
    await request(app)
      .get('/metrics')
      .set('X-Forwarded-For', '198.51.100.32')
      .set('Authorization', `Bearer ${metricsToken}`)
      .expect(200);
  });

  it('on a worker-only process (the ops app), counts no scrape that sent no token (a page elsewhere can make those)', async () => {
    const app = opsApp();
    const from = '198.51.100.33';
    for (let i = 0; i <= LIMIT * 2; i += 1)
      await request(app).get('/metrics').set('X-Forwarded-For', from).expect(401);
    await request(app)
      .get('/metrics')
      .set('X-Forwarded-For', from)
      .set('Authorization', `Bearer ${metricsToken}`)
      .expect(200);
  });

  const adminAppWith = () =>
    createAdminApp({
      events: api.storage.events,
      logger,
      redis: api.redis,
      decisions: api.storage.decisions,
      communityMembers: api.storage.communityMembers,
      queues: [],
      auth: { adminToken: ADMIN_TOKEN },
      limits: { defaultLimit: 50, maxLimit: 500 },
      trustProxy: ['loopback'],
      failedAuth: createFailedAuthLimit({
        redis: api.redis,
        points: LIMIT,
        windowMs: 60_000,
        keyPrefix: uniqueName('auth'),
      }),
    });

  it('counts wrong credentials posted to the admin sign-in form, with bearer guesses, against one limit', async () => {
    const app = adminAppWith();
    const from = '198.51.100.13';
    const guess = (i: number) => `guess-${i}-${'x'.repeat(32)}`;
    for (let i = 0; i < LIMIT; i += 1) {
      const res =
        i % 2 === 0
          ? await request(app)
              .post('/admin/login')
              .set('X-Forwarded-For', from)
              .type('form')
              .send({ token: guess(i) })
          : await request(app)
              .get('/admin/events')
              .set('X-Forwarded-For', from)
              .set('Authorization', `Bearer ${guess(i)}`);
      expect(res.status).to.equal(401);
    }
    await request(app)
      .post('/admin/login')
      .set('X-Forwarded-For', from)
      .type('form')
      .send({ token: 'guess' });
    // Over the limit: even the right credential is refused, on the form as on the JSON paths.
    expectRefused(
      await request(app)
        .post('/admin/login')
        .set('X-Forwarded-For', from)
        .type('form')
        .send({ token: ADMIN_TOKEN }),
    );
    expectRefused(
      await request(app)
        .get('/admin/events')
        .set('X-Forwarded-For', from)
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`),
    );
  });

  // Another site's page can post the sign-in form from the admin's own browser: its wrong tokens
  // must not lock that admin's address out.
  it('refuses a sign-in form posted from another site with 403, without counting it', async () => {
    const app = adminAppWith();
    const from = '198.51.100.14';
    for (let i = 0; i < LIMIT + 2; i += 1) {
      const res = await request(app)
        .post('/admin/login')
        .set('X-Forwarded-For', from)
        .set(
          [
            { Origin: 'https://evil.example' },
            { 'Sec-Fetch-Site': 'cross-site', Origin: 'https://evil.example' },
            { 'Sec-Fetch-Site': 'same-site' },
            { Origin: 'null' },
          ][i % 4]!,
        )
        .type('form')
        .send({ token: `guess-${i}-${'x'.repeat(32)}` });
      expect(res.status).to.equal(403);
      expect(res.text).to.include('a form sent from another site is refused');
    }
    const own = await request(app)
      .get('/admin/events')
      .set('X-Forwarded-For', from)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    expect(own.status).to.equal(200);
    // The form from its own page still works, also as a browser posts it from a page served with
    // Referrer-Policy: no-referrer (helmet's), with `Origin: null` and Sec-Fetch-Site saying whose.
    for (const headers of [
      { Origin: 'http://127.0.0.1', Host: '127.0.0.1' },
      { Origin: 'null', 'Sec-Fetch-Site': 'same-origin' },
    ]) {
      const signedIn = await request(app)
        .post('/admin/login')
        .set('X-Forwarded-For', from)
        .set(headers)
        .type('form')
        .send({ token: ADMIN_TOKEN });
      expect(signedIn.status, JSON.stringify(headers)).to.equal(303);
    }
  });

  it('does not count calls with no credential or a stale session cookie (an open dashboard polling after sign-out)', async () => {
    const app = adminAppWith();
    const from = '198.51.100.14';
    for (let i = 0; i <= 2 * LIMIT; i += 1) {
      const polled = await request(app)
        .get('/admin/events')
        .set('X-Forwarded-For', from)
        .set('Cookie', `${ADMIN_SESSION_COOKIE}=${'s'.repeat(43)}`);
      expect(polled.status).to.equal(401);
      await request(app).get('/admin/events').set('X-Forwarded-For', from).expect(401);
    }
    // No guess was made: the admin signs in again from that address.
    await request(app)
      .post('/admin/login')
      .set('X-Forwarded-For', from)
      .type('form')
      .send({ token: ADMIN_TOKEN })
      .expect(303);
  });

  it('counts wrong admin tokens on the admin listener (guessing ADMIN_TOKEN)', async () => {
    const app = adminAppWith();
    const from = '198.51.100.11';
    for (let i = 0; i < LIMIT; i += 1) {
      await request(app)
        .get('/admin/events')
        .set('X-Forwarded-For', from)
        .set('Authorization', `Bearer guess-${i}-${'x'.repeat(32)}`)
        .expect(401);
    }
    await request(app).get('/admin/events').set('X-Forwarded-For', from).set('Authorization', 'Bearer guess');
    expectRefused(
      await request(app)
        .get('/admin/events')
        .set('X-Forwarded-For', from)
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`),
    );
  });

  it('shares the count across API instances through Redis', async () => {
    const keyPrefix = uniqueName('auth');
    const [first, second] = [appWith(keyPrefix), appWith(keyPrefix)];
    const from = '198.51.100.12';
    for (let i = 0; i < LIMIT; i += 1) {
      await request(i % 2 === 0 ? first : second)
        .get('/notifications/v3')
        .set('X-Forwarded-For', from)
        .set('Authorization', forged)
        .expect(401);
    }
    // The next failure, on either instance, is over the shared limit: that instance refuses from then on.
    await request(second).get('/notifications/v3').set('X-Forwarded-For', from).set('Authorization', forged);
    expectRefused(
      await request(second)
        .get('/notifications/v3')
        .set('X-Forwarded-For', from)
        .set('Authorization', await bearer('u-x')),
    );
  });

  it('without TRUST_PROXY, ignores X-Forwarded-For: a client cannot spread its failures over made-up addresses', async () => {
    const app = appWith(uniqueName('auth'), { trustProxy: [] });
    for (let i = 0; i <= LIMIT; i += 1) {
      await request(app)
        .get('/notifications/v3')
        .set('X-Forwarded-For', `203.0.113.${i}`)
        .set('Authorization', forged);
    }
    expectRefused(
      await request(app)
        .get('/notifications/v3')
        .set('X-Forwarded-For', '203.0.113.200')
        .set('Authorization', await bearer('u-y')),
    );
  });

  // The refusals each instance keeps in memory had no bound: past 100,000 every new one swept the
  // whole map, and addresses refused within one window (a botnet, the /64s of one IPv6 /48) all
  // stayed. The count in Redis refuses them anyway; the memory is only a shortcut.
  it('keeps at most maxRefused refusals in memory, the newest, and Redis still refuses one it let go', async () => {
    const limit = createFailedAuthLimit({
      redis: api.redis,
      points: 1,
      windowMs: 60_000,
      keyPrefix: uniqueName('bounded'),
      maxRefused: 3,
    });
    const addresses = Array.from({ length: 10 }, (_, n) => `198.51.100.${100 + n}`);
    for (const address of addresses) {
      expect(await limit.failed(address), `${address}'s first failure`).to.equal(0);
      expect(await limit.failed(address), `${address}'s second failure`).to.be.above(0);
    }
    expect(limit.refused).to.equal(3);
    expect(addresses.map((address) => limit.blockedFor(address) > 0)).to.deep.equal([
      ...Array<boolean>(7).fill(false),
      true,
      true,
      true,
    ]);
    // Let go from memory, still over its count in Redis: its next failure is refused at once.
    expect(await limit.failed(addresses[0]!)).to.be.above(0);
    expect(limit.blockedFor(addresses[0]!)).to.be.above(0);
    expect(limit.refused).to.equal(3);
  });
});
