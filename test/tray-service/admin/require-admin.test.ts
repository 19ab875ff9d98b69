import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { createAdminOpenApiDocument } from '../../../tray-service/admin/api-schema/admin-api-schema.ts';
import { resolveJwtConfig } from '../../../shared/config/tray-api-config.ts';
import { createAdminJwtVerifier } from '../../../tray-service/admin/admin-jwt-verifier.ts';
import { createFailedAuthLimit } from '../../../tray-service/http/rate-limit/failed-auth-limit.ts';
import { createRedis, type RedisClient } from '../../../shared/redis/create-redis.ts';
import { startKeyServer, type KeyServer } from '../../support/key-server.ts';
import { uniqueName } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { authenticateAdmin } from '../../../tray-service/admin/require-admin.ts';
import { AppError } from '../../../shared/errors/app-error.ts';
import {
  ADMIN_JWT,
  ADMIN_TOKEN,
  adminApp,
  adminJwt,
  sessionCookie,
  userToken,
  verifyAdminJwt,
} from './admin-fixtures.ts';

/** The admin guard: a bearer credential or the session cookie, and the CSRF token for changing cookie requests. */
describe('requireAdmin (every /admin data path)', function () {
  this.timeout(30_000);
  const suite = useTrayStorage();
  let app: Express;
  let close: () => void;
  let cookie: string;
  let csrfToken: string;
  before(async () => {
    ({ app, close } = adminApp(suite.storage));
    cookie = await sessionCookie(app);
    csrfToken = (await request(app).get('/admin/session').set('Cookie', cookie).expect(200)).body.csrfToken;
  });
  after(() => close());

  it('admits a GET with the session cookie alone', async () => {
    const res = await request(app).get('/admin/events').set('Cookie', cookie).expect(200);
    expect(res.body).to.have.property('items');
  });

  it('takes a wrong bearer credential as a 401 even beside a valid cookie (no fall back)', async () => {
    await request(app)
      .get('/admin/events')
      .set('Cookie', cookie)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}x`)
      .expect(401);
  });

  it('takes a malformed bearer header as a 401 beside a valid cookie too, but not another scheme', async () => {
    for (const header of ['Bearer a b', 'Bearer ', 'bearer', `Bearer  ${ADMIN_TOKEN} x`]) {
      const res = await request(app)
        .get('/admin/events')
        .set('Cookie', cookie)
        .set('Authorization', header)
        .expect(401);
      expect(res.body.message, header).to.match(/bearer/i);
    }
    // A proxy's Basic credential in front of the console is not the admin's: the cookie decides.
    await request(app)
      .get('/admin/events')
      .set('Cookie', cookie)
      .set('Authorization', 'Basic dTpw')
      .expect(200);
  });

  it('answers 401 to a user token and to a made-up cookie', async () => {
    await request(app)
      .get('/admin/events')
      .set('Authorization', `Bearer ${await userToken('u-ana', { role: 'admin' })}`)
      .expect(401);
    await request(app)
      .get('/admin/events')
      .set('Cookie', `admin_session=${'x'.repeat(43)}`)
      .expect(401);
  });

  // SameSite=Strict sends the cookie with every same-site request, a page of another application
  // on a sibling host or port included; an image or no-cors fetch there started exports and tails.
  describe('a request made with the cookie from another site’s page', () => {
    const fromElsewhere = [
      { 'Sec-Fetch-Site': 'same-site' },
      { 'Sec-Fetch-Site': 'cross-site' },
      { Origin: 'http://elsewhere.example' },
    ];

    it('answers 403 to reads and exports, naming the problem, and starts nothing', async () => {
      for (const path of ['/admin/events', '/admin/events/export?format=csv', '/admin/events/tail'])
        for (const headers of fromElsewhere) {
          const res = await request(app).get(path).set('Cookie', cookie).set(headers).expect(403);
          expect(res.body.code, `${path} ${JSON.stringify(headers)}`).to.equal(403000);
          expect(res.body.message).to.match(/another site/);
        }
    });

    it('admits the console’s own requests, an address typed, and a bearer credential from anywhere', async () => {
      for (const headers of [{ 'Sec-Fetch-Site': 'same-origin' }, { 'Sec-Fetch-Site': 'none' }])
        await request(app).get('/admin/events').set('Cookie', cookie).set(headers).expect(200);
      await request(app)
        .get('/admin/events')
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
        .set('Sec-Fetch-Site', 'cross-site')
        .expect(200);
    });

    it('still opens the console page from a link on a sibling site', async () => {
      await request(app)
        .get('/admin/console')
        .set('Cookie', cookie)
        .set('Accept', 'text/html')
        .set('Sec-Fetch-Site', 'same-site')
        .expect(200);
    });
  });

  describe('a changing request made with the cookie', () => {
    it('answers 403 without x-csrf-token, or with another one', async () => {
      for (const header of [{}, { 'x-csrf-token': 'wrong' }, { 'x-csrf-token': `${csrfToken}x` }]) {
        const res = await request(app)
          .post('/admin/nothing-here')
          .set('Cookie', cookie)
          .set(header)
          .expect(403);
        expect(res.body.code).to.equal(403000);
        expect(res.body.message).to.match(/^x-csrf-token:/);
      }
    });
    it('passes the guard with the session’s token (then meets the router: 404 here)', async () => {
      await request(app)
        .post('/admin/nothing-here')
        .set('Cookie', cookie)
        .set('x-csrf-token', csrfToken)
        .expect(404);
    });
    it('needs no CSRF token with a bearer credential', async () => {
      await request(app)
        .post('/admin/nothing-here')
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
        .expect(404);
    });
  });
});

/** Every data path of the admin API, from its OpenAPI document (a path added there is covered here). */
function dataPaths(): { method: string; path: string }[] {
  const paths = createAdminOpenApiDocument({ defaultLimit: 50, maxLimit: 500 }).paths as Record<
    string,
    object
  >;
  return Object.entries(paths)
    .filter(([path]) => path.startsWith('/admin/'))
    .flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => ({
        method: method.toUpperCase(),
        path: path.replace('{key}', 'some-key').replace('{id}', 'some-id'),
      })),
    );
}

describe('every admin data path refuses whoever is not an admin', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  let app: Express;
  let close: () => void;
  let cookie: string;
  before(async () => {
    ({ app, close } = adminApp(suite.storage));
    cookie = await sessionCookie(app);
  });
  after(() => close());

  const call = (method: string, path: string) =>
    method === 'POST' ? request(app).post(path).send({}) : request(app).get(path);

  it('covers every documented admin path, GETs and POSTs', () => {
    const methods = new Set(dataPaths().map((one) => one.method));
    expect(dataPaths().length).to.be.at.least(14);
    expect([...methods].sort()).to.deep.equal(['GET', 'POST']);
  });

  it('answers 401 without a credential, with a wrong admin token, a user token (admin role claim or not) or a made-up cookie', async () => {
    const memberToken = await userToken('u-ana');
    const rootToken = await userToken('u-root', { role: 'admin', roles: ['admin'] });
    for (const { method, path } of dataPaths()) {
      const attempts: [string, Record<string, string>][] = [
        ['nothing', {}],
        ['a wrong token', { Authorization: `Bearer ${ADMIN_TOKEN}-wrong` }],
        ['a user token', { Authorization: `Bearer ${memberToken}` }],
        ['a user token claiming admin', { Authorization: `Bearer ${rootToken}` }],
        ['a made-up cookie', { Cookie: `admin_session=${'z'.repeat(43)}` }],
      ];
      for (const [what, headers] of attempts) {
        const res = await call(method, path).set(headers);
        expect(res.status, `${method} ${path} with ${what}`).to.equal(401);
        expect(res.body.code, `${method} ${path} with ${what}`).to.equal(401000);
      }
    }
  });

  it('answers 403 to every POST made with the session cookie but no x-csrf-token', async () => {
    for (const { method, path } of dataPaths().filter((one) => one.method === 'POST')) {
      const res = await call(method, path).set('Cookie', cookie);
      expect(res.status, `${method} ${path}`).to.equal(403);
    }
  });
});

describe('admin JWTs with ADMIN_JWT_JWKS_URL and the key server down', function () {
  this.timeout(30_000);
  const suite = useTrayStorage();
  let keyServer: KeyServer;
  let redis: RedisClient;
  before(async () => {
    keyServer = await startKeyServer();
    redis = createRedis(testStack().redisUrl);
  });
  after(async () => {
    redis.disconnect();
    await keyServer.stop();
  });

  it('answers a valid admin JWT 503, never 401 or 429, and admits it once the keys are back', async () => {
    const limit = 2;
    const { app, close } = adminApp(suite.storage, {
      deps: {
        auth: {
          adminToken: ADMIN_TOKEN,
          verifyAdminJwt: createAdminJwtVerifier(
            {
              ...resolveJwtConfig({ JWT_JWKS_URL: keyServer.url, JWT_AUDIENCE: keyServer.audience }),
              ...ADMIN_JWT,
            },
            { keyRetryMs: 100 },
          ),
        },
        failedAuth: createFailedAuthLimit({
          redis,
          points: limit,
          windowMs: 60_000,
          keyPrefix: uniqueName('admin-auth-fail'),
        }),
      },
    });
    try {
      const token = await keyServer.sign('ops-1', {
        claims: { aud: ADMIN_JWT.audience, iss: ADMIN_JWT.issuer },
      });
      keyServer.mode = '503';
      for (let i = 0; i <= limit + 1; i++) {
        const res = await request(app).get('/admin/events').set('Authorization', `Bearer ${token}`);
        expect(res.status, JSON.stringify(res.body)).to.equal(503);
        expect(res.body.code).to.equal(503000);
      }
      keyServer.mode = 'ok';
      await new Promise((resolve) => setTimeout(resolve, 150));
      await request(app).get('/admin/events').set('Authorization', `Bearer ${token}`).expect(200);
    } finally {
      close();
    }
  });
});

// A JWT signed with the admin key but expired (an operator's cron job still polling with it)
// guesses nothing, as on the tray API; counted, it locked every admin behind that address out,
// the sign-in form too.
describe('AUTH_FAILURE_LIMIT on the admin API', function () {
  this.timeout(30_000);
  const suite = useTrayStorage();
  let redis: RedisClient;
  before(() => {
    redis = createRedis(testStack().redisUrl);
  });
  after(() => redis.disconnect());

  const limited = (limit: number) =>
    adminApp(suite.storage, {
      deps: {
        failedAuth: createFailedAuthLimit({
          redis,
          points: limit,
          windowMs: 60_000,
          keyPrefix: uniqueName('admin-auth-fail'),
        }),
      },
    });

  it('counts no admin JWT that verified but expired, and still counts a forged one', async () => {
    const limit = 3;
    const expired = await adminJwt('ops-cron', Math.floor(Date.now() / 1000) - 60);
    const { app, close } = limited(limit);
    try {
      for (let i = 0; i <= limit + 1; i++) {
        const res = await request(app).get('/admin/events').set('Authorization', `Bearer ${expired}`);
        expect(res.status, `call ${i + 1} with an expired admin JWT`).to.equal(401);
      }
      await request(app).get('/admin/login').expect(200);
      // A forged one (its signature changed) is a guess: past the limit, the address is refused.
      for (let i = 0; i <= limit; i++)
        await request(app).get('/admin/events').set('Authorization', `Bearer ${expired}x`).expect(401);
      await request(app).get('/admin/login').expect(429);
    } finally {
      close();
    }
  });

  // The sign-in form counted every refusal, an expired admin JWT pasted again included: the
  // admin locked their own address out, as the bearer path took care not to.
  it('the sign-in form counts no admin JWT that verified but expired, and still counts a forged one', async () => {
    const limit = 3;
    const expired = await adminJwt('ops-paste', Math.floor(Date.now() / 1000) - 60);
    const { app, close } = limited(limit);
    const signIn = (token: string) => request(app).post('/admin/login').type('form').send({ token });
    try {
      for (let i = 0; i <= limit + 1; i++)
        expect((await signIn(expired)).status, `sign-in ${i + 1} with an expired admin JWT`).to.equal(401);
      await request(app).get('/admin/login').expect(200);
      for (let i = 0; i <= limit; i++) await signIn(`${expired}x`);
      await request(app).get('/admin/login').expect(429);
    } finally {
      close();
    }
  });

  // ADMIN_TOKEN may hold any character but a space; the counter read only the token68 alphabet,
  // so guesses like `guess!` were refused for ever, never counted.
  it('counts a wrong bearer token with characters beyond the token68 alphabet', async () => {
    const limit = 3;
    const { app, close } = limited(limit);
    try {
      for (let i = 0; i <= limit; i++)
        await request(app).get('/admin/events').set('Authorization', `Bearer guess!${i}:x`).expect(401);
      await request(app).get('/admin/login').expect(429);
    } finally {
      close();
    }
  });
});

describe('authenticateAdmin', () => {
  it('refuses an admin JWT whose sub holds a lone surrogate: it would name the same admin as U+FFFD', async () => {
    await expect(authenticateAdmin(await adminJwt('ops\uD800'), { verifyAdminJwt })).to.be.rejectedWith(
      AppError,
      'invalid admin token',
    );
    expect(await authenticateAdmin(await adminJwt('ops\uFFFD'), { verifyAdminJwt })).to.deep.include({
      kind: 'jwt',
      subject: 'ops\uFFFD',
    });
  });
});
