import { expect } from 'chai';
import type { Express } from 'express';
import { SignJWT } from 'jose';
import request from 'supertest';
import { adminJwtKeys, resolveAdminJwt } from '../../../shared/config/tray-admin-access-config.ts';
import { resolveJwtConfig } from '../../../shared/config/tray-api-config.ts';
import { loadTrayConfig } from '../../../shared/config/tray-config.ts';
import { createAdminJwtVerifier } from '../../../tray-service/admin/admin-jwt-verifier.ts';
import { ADMIN_SESSION_COOKIE } from '../../../tray-service/admin/session-cookie.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { ADMIN_TOKEN, adminApp, sessionCookie } from './admin-fixtures.ts';

const USER_KEY = 'user-token-key-of-the-session-tests-0123';
const ADMIN_KEY = 'admin-jwt-key-of-the-session-tests-01234';
const ROTATED_KEY = 'admin-jwt-key-of-the-session-tests-rotated';
const PAIR = { ADMIN_JWT_AUDIENCE: 'tray-admin', ADMIN_JWT_ISSUER: 'https://ops.example' };

/** The admin JWT verifier main.ts builds from these variables. */
function verifierFor(env: Record<string, string>) {
  const config = loadTrayConfig({ JWT_SECRET: USER_KEY, ...PAIR, ...env });
  return createAdminJwtVerifier(adminJwtKeys(resolveAdminJwt(config)!, resolveJwtConfig(config)));
}

const adminJwtSignedWith = (key: string) =>
  new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('ops-ana')
    .setAudience(PAIR.ADMIN_JWT_AUDIENCE)
    .setIssuer(PAIR.ADMIN_JWT_ISSUER)
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(key));

/**
 * A session is bound to the admin credential's configuration: as one opened with ADMIN_TOKEN ends
 * when ADMIN_TOKEN changes, one opened with an admin JWT ends when what verifies admin JWTs changes.
 * Each app below is a restart of the admin listener with other variables, on the same Redis.
 */
describe('admin sessions opened with an admin JWT, across a change of the admin JWT key', function () {
  this.timeout(30_000);
  const suite = useTrayStorage();
  const opened: (() => void)[] = [];
  after(() => opened.forEach((close) => close()));

  /** The admin listener started with these variables. */
  const started = (env: Record<string, string>): Express => {
    const { app, close } = adminApp(suite.storage, {
      deps: { auth: { adminToken: ADMIN_TOKEN, verifyAdminJwt: verifierFor(env) } },
    });
    opened.push(close);
    return app;
  };

  const signIn = (app: Express, token: string) => sessionCookie(app, token);

  // As every other admin call, and as its document says (400): a typo was answered 200.
  it('refuses an unknown query parameter on GET /admin/session, naming it', async () => {
    const app = started({ ADMIN_JWT_SECRET: ADMIN_KEY });
    const cookie = await signIn(app, await adminJwtSignedWith(ADMIN_KEY));
    const refused = await request(app).get('/admin/session?verbose=1').set('Cookie', cookie).expect(400);
    expect(refused.body).to.deep.equal({
      status: 'error',
      code: 400001,
      message: 'verbose: unknown query parameter',
    });
  });

  it('ends when ADMIN_JWT_SECRET changes: the cookie is refused as an expired session is', async () => {
    const before = started({ ADMIN_JWT_SECRET: ADMIN_KEY });
    const cookie = await signIn(before, await adminJwtSignedWith(ADMIN_KEY));
    await request(before).get('/admin/session').set('Cookie', cookie).expect(200);
    const rotated = started({ ADMIN_JWT_SECRET: ROTATED_KEY });
    const refused = await request(rotated).get('/admin/session').set('Cookie', cookie).expect(401);
    const unknown = `${ADMIN_SESSION_COOKIE}=${'x'.repeat(43)}`;
    const ended = await request(rotated).get('/admin/session').set('Cookie', unknown).expect(401);
    expect(refused.body).to.deep.equal(ended.body);
    await request(rotated).get('/admin/events').set('Cookie', cookie).expect(401);
  });

  it('ends when admin JWTs move from the tray API key to a key of their own', async () => {
    const shared = started({});
    const cookie = await signIn(shared, await adminJwtSignedWith(USER_KEY));
    await request(shared).get('/admin/session').set('Cookie', cookie).expect(200);
    const own = started({ ADMIN_JWT_SECRET: ADMIN_KEY });
    await request(own).get('/admin/session').set('Cookie', cookie).expect(401);
  });

  // The JWT spec allows a fractional exp, and some issuers write one (Python's time.time() + 3600):
  // the session's lifetime came out fractional, Redis refused it and sign-in answered 500.
  it('opens a session for a JWT whose exp has a fraction of a second', async () => {
    const app = started({ ADMIN_JWT_SECRET: ADMIN_KEY });
    const fractional = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('ops-ana')
      .setAudience(PAIR.ADMIN_JWT_AUDIENCE)
      .setIssuer(PAIR.ADMIN_JWT_ISSUER)
      .setExpirationTime(Date.now() / 1000 + 600.123456)
      .sign(new TextEncoder().encode(ADMIN_KEY));
    const cookie = await signIn(app, fractional);
    const session = await request(app).get('/admin/session').set('Cookie', cookie).expect(200);
    expect(session.body.expiresAt).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$/);
  });

  it('lasts across a restart with the same key', async () => {
    const cookie = await signIn(
      started({ ADMIN_JWT_SECRET: ADMIN_KEY }),
      await adminJwtSignedWith(ADMIN_KEY),
    );
    await request(started({ ADMIN_JWT_SECRET: ADMIN_KEY }))
      .get('/admin/session')
      .set('Cookie', cookie)
      .expect(200);
  });

  it('leaves a session opened with ADMIN_TOKEN alone: only ADMIN_TOKEN ends that one', async () => {
    const cookie = await signIn(started({ ADMIN_JWT_SECRET: ADMIN_KEY }), ADMIN_TOKEN);
    await request(started({ ADMIN_JWT_SECRET: ROTATED_KEY }))
      .get('/admin/session')
      .set('Cookie', cookie)
      .expect(200);
  });
});
