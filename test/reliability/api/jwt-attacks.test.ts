import { expect } from 'chai';
import type { Express } from 'express';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { resolveJwtConfig } from '../../../shared/config/tray-api-config.ts';
import { createTokenVerifier } from '../../../tray-service/http/auth/create-token-verifier.ts';
import { TEST_SECRET, useTrayApi } from '../../tray-service/api/support/api-harness.ts';
import { reportFigures, tally } from '../support/report-figures.ts';

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const nowSeconds = () => Math.floor(Date.now() / 1000);
const hmacKey = (secret: string) => new TextEncoder().encode(secret);
const issuer = 'https://platform.example';
const audience = 'tray';

/** A token assembled by hand: header and payload as given, signature as given (or none). */
function handmade(header: Record<string, unknown>, payload: JWTPayload, signature = ''): string {
  return `${base64url(header)}.${base64url(payload)}.${signature}`;
}

/** Header and payload as given, HMAC-SHA256-signed with `secret` (jose refuses to sign some of these). */
function handSigned(header: Record<string, unknown>, payload: JWTPayload, secret = TEST_SECRET): string {
  const input = `${base64url(header)}.${base64url(payload)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

/** A validly signed HS256 token with exactly these claims (nothing added). */
function hs256(claims: JWTPayload, header: Record<string, unknown> = {}, secret = TEST_SECRET) {
  return new SignJWT(claims).setProtectedHeader({ ...header, alg: 'HS256' }).sign(hmacKey(secret));
}

const fine = (): JWTPayload => ({ sub: 'user-a', iss: issuer, aud: audience, exp: nowSeconds() + 3600 });

/** Every protected endpoint, so no route can be missing its guard. */
const endpoints: { method: 'get' | 'post' | 'delete'; path: string; body?: unknown }[] = [
  { method: 'get', path: '/notifications/v3' },
  { method: 'get', path: '/notifications/v3/history' },
  { method: 'get', path: '/notifications/v2/history' },
  { method: 'get', path: '/notifications/v3/mark-all-as-read' },
  { method: 'post', path: '/notifications/v2/last-read' },
  { method: 'post', path: '/notifications/v2/read', body: { verb: 'comment', targetId: 't' } },
  { method: 'delete', path: '/notifications/v3/delete-all' },
  { method: 'post', path: '/block/members', body: { blockUserId: 'x' } },
  { method: 'delete', path: '/block/members', body: { blockUserId: 'x' } },
  { method: 'get', path: '/block/members?checkList=x' },
  { method: 'post', path: '/block', body: {} },
];

function call(app: Express, endpoint: (typeof endpoints)[number], authorization: string) {
  const req = request(app)[endpoint.method](endpoint.path).set('authorization', authorization);
  return endpoint.body === undefined ? req : req.send(endpoint.body as object);
}

describe('tray API under JWT attacks', function () {
  this.timeout(60_000);
  const api = useTrayApi();
  const statuses: number[] = [];

  /** Every endpoint answers 401 with the JSON error shape; the token never comes back. */
  async function expectRefusedEverywhere(app: Express, token: string) {
    for (const endpoint of endpoints) {
      const res = await call(app, endpoint, `Bearer ${token}`);
      statuses.push(res.status);
      expect(res.status, `${endpoint.method.toUpperCase()} ${endpoint.path}`).to.equal(401);
      expect(res.body).to.have.keys(['status', 'code', 'message']);
      expect(res.text).not.to.include(token);
    }
  }

  describe('with JWT_SECRET, JWT_ISSUER and JWT_AUDIENCE set', () => {
    let app: Express;
    before(() => {
      app = api.app({
        verifyToken: createTokenVerifier(
          resolveJwtConfig({ JWT_SECRET: TEST_SECRET, JWT_ISSUER: issuer, JWT_AUDIENCE: audience }),
        ),
      });
    });

    it('accepts a correct token (control: the attacks below fail for their flaw alone)', async () => {
      for (const endpoint of endpoints) {
        const res = await call(app, endpoint, `Bearer ${await hs256(fine())}`);
        // Past authentication: 200, or 404 for reading a record that does not exist.
        expect(res.status, `${endpoint.method.toUpperCase()} ${endpoint.path}`).to.be.oneOf([200, 404]);
      }
    });

    const attacks: { name: string; token: () => Promise<string> | string }[] = [
      { name: 'alg none without a signature', token: () => handmade({ alg: 'none', typ: 'JWT' }, fine()) },
      { name: 'alg None with a signature part', token: () => handmade({ alg: 'None' }, fine(), 'AAAA') },
      { name: 'alg NONE', token: () => handmade({ alg: 'NONE' }, fine()) },
      {
        name: 'alg none carrying the real HS256 signature',
        token: async () => {
          const real = (await hs256(fine())).split('.')[2]!;
          return handmade({ alg: 'none' }, fine(), real);
        },
      },
      { name: 'signed with another secret', token: () => hs256(fine(), {}, `${TEST_SECRET}-not`) },
      {
        name: 'HS512 with the right secret (algorithm not in the list)',
        token: () => new SignJWT(fine()).setProtectedHeader({ alg: 'HS512' }).sign(hmacKey(TEST_SECRET)),
      },
      { name: 'without exp', token: () => hs256({ ...fine(), exp: undefined }) },
      { name: 'expired a minute ago', token: () => hs256({ ...fine(), exp: nowSeconds() - 60 }) },
      {
        name: 'exp as a string',
        token: () => hs256({ ...fine(), exp: String(nowSeconds() + 3600) as unknown as number }),
      },
      { name: 'nbf an hour ahead', token: () => hs256({ ...fine(), nbf: nowSeconds() + 3600 }) },
      {
        name: 'iat an hour ahead and nbf ahead',
        token: () => hs256({ ...fine(), iat: nowSeconds() + 3600, nbf: nowSeconds() + 3600 }),
      },
      { name: 'a wrong iss', token: () => hs256({ ...fine(), iss: 'https://evil.example' }) },
      { name: 'no iss', token: () => hs256({ ...fine(), iss: undefined }) },
      { name: 'a wrong aud', token: () => hs256({ ...fine(), aud: 'admin' }) },
      { name: 'an aud list without ours', token: () => hs256({ ...fine(), aud: ['admin', 'tray2'] }) },
      { name: 'no aud', token: () => hs256({ ...fine(), aud: undefined }) },
      { name: 'no sub or userId', token: () => hs256({ ...fine(), sub: undefined }) },
      {
        name: 'an operator object as userId and no sub',
        token: () => hs256({ ...fine(), sub: undefined, userId: { $ne: null } }),
      },
      {
        name: 'a payload that is not JSON',
        token: async () => {
          const [header] = (await hs256(fine())).split('.');
          return `${header}.${Buffer.from('not json').toString('base64url')}.AAAA`;
        },
      },
      { name: 'a truncated signature', token: async () => (await hs256(fine())).slice(0, -5) },
      { name: 'two dots only', token: () => '..' },
      {
        name: 'crit header the server does not understand',
        token: () => handSigned({ alg: 'HS256', crit: ['x-evil'], 'x-evil': true }, fine()),
      },
    ];
    for (const attack of attacks) {
      it(`answers 401 on every endpoint to a token ${attack.name}`, async () => {
        await expectRefusedEverywhere(app, await attack.token());
      });
    }

    for (const kid of [
      '../../../../etc/passwd',
      "' OR '1'='1",
      'k'.repeat(10_000),
      'k1\u0000',
      '__proto__',
    ]) {
      it(`answers 401 to a kid of ${JSON.stringify(kid.slice(0, 24))} on a token signed with another secret`, async () => {
        await expectRefusedEverywhere(
          app,
          await hs256(fine(), { kid }, 'attacker-secret-of-32-characters!!'),
        );
      });
    }
    it('answers 401 to a kid that is an operator object', async () => {
      await expectRefusedEverywhere(app, handmade({ alg: 'HS256', kid: { $ne: null } }, fine(), 'AAAA'));
    });
    it('accepts an odd kid on a token signed with the right secret: with a shared secret the kid selects nothing', async () => {
      const res = await request(app)
        .get('/notifications/v3')
        .set('authorization', `Bearer ${await hs256(fine(), { kid: '../../../../etc/passwd' })}`);
      expect(res.status).to.equal(200);
    });

    for (const authorization of ['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer  ', 'Token abc', '']) {
      it(`answers 401 to Authorization: ${JSON.stringify(authorization)}`, async () => {
        const res = await request(app).get('/notifications/v3').set('authorization', authorization);
        statuses.push(res.status);
        expect(res.status).to.equal(401);
      });
    }
    it('answers 401 to two tokens in one header, and never takes a token from the query string', async () => {
      const good = await hs256(fine());
      for (const req of [
        request(app).get('/notifications/v3').set('authorization', `Bearer ${good} ${good}`),
        request(app).get(`/notifications/v3?access_token=${good}`),
      ]) {
        const res = await req;
        statuses.push(res.status);
        expect(res.status).to.equal(401);
      }
    });
  });

  describe('with JWT_PUBLIC_KEY (RS256)', () => {
    let app: Express;
    let publicPem: string;
    let publicJwk: JWK;
    let privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
    before(async () => {
      const pair = await generateKeyPair('RS256', { extractable: true });
      privateKey = pair.privateKey;
      publicPem = await exportSPKI(pair.publicKey);
      publicJwk = await exportJWK(pair.publicKey);
      app = api.app({ verifyToken: createTokenVerifier(resolveJwtConfig({ JWT_PUBLIC_KEY: publicPem })) });
    });
    it('accepts a token signed with the matching private key (control: the attacks below fail for their flaw alone)', async () => {
      const token = await new SignJWT({ sub: 'user-a', exp: nowSeconds() + 3600 })
        .setProtectedHeader({ alg: 'RS256' })
        .sign(privateKey);
      const res = await request(app).get('/notifications/v3').set('Authorization', `Bearer ${token}`);
      expect(res.status).to.equal(200);
    });
    it('answers 401 to HS256 tokens signed with the public key (PEM, its DER body, or its JWK) as the HMAC secret', async () => {
      const claims = { sub: 'user-a', exp: nowSeconds() + 3600 };
      const der = publicPem.replace(/-----[A-Z ]+-----|\s/g, '');
      for (const secret of [publicPem, `${publicPem}\n`, der, JSON.stringify(publicJwk)]) {
        await expectRefusedEverywhere(app, await hs256(claims, {}, secret));
      }
    });
    it('answers 401 to alg none', async () => {
      await expectRefusedEverywhere(
        app,
        handmade({ alg: 'none' }, { sub: 'user-a', exp: nowSeconds() + 60 }),
      );
    });
  });

  describe('with JWT_JWKS_URL (a local JWKS server holding one RS256 key, kid "k1")', () => {
    let app: Express;
    let server: Server;
    let signingKey: PrivateKey;
    let attackerKey: PrivateKey;
    let jwksRequests = 0;
    before(async () => {
      const pair = await generateKeyPair('RS256', { extractable: true });
      signingKey = pair.privateKey;
      attackerKey = (await generateKeyPair('RS256')).privateKey;
      const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
      server = createServer((_req, res) => {
        jwksRequests += 1;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ keys: [jwk] }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      app = api.app({
        verifyToken: createTokenVerifier(
          resolveJwtConfig({ JWT_JWKS_URL: `http://127.0.0.1:${port}/jwks.json`, JWT_AUDIENCE: 'tray' }),
        ),
      });
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    const rs256 = (kid: unknown, key: PrivateKey) =>
      new SignJWT({ sub: 'user-a', aud: 'tray', exp: nowSeconds() + 3600 })
        .setProtectedHeader({ alg: 'RS256', kid: kid as string })
        .sign(key);

    it('accepts a token signed by the JWKS key with kid k1 (control)', async () => {
      const res = await request(app)
        .get('/notifications/v3')
        .set('authorization', `Bearer ${await rs256('k1', signingKey)}`);
      expect(res.status).to.equal(200);
    });
    for (const kid of [
      'k1',
      '../k1',
      'k1 ',
      'K1',
      'k1\u0000',
      '__proto__',
      'constructor',
      'x'.repeat(10_000),
    ]) {
      it(`answers 401 to kid ${JSON.stringify(kid.slice(0, 24))} on a token signed by an attacker key`, async () => {
        await expectRefusedEverywhere(app, await rs256(kid, attackerKey));
      });
    }
    it('answers 401, not 5xx, to kid values that are not strings', async () => {
      for (const kid of [{ $ne: null }, ['k1'], 1, null]) {
        await expectRefusedEverywhere(
          app,
          handmade({ alg: 'RS256', kid }, { sub: 'user-a', aud: 'tray', exp: nowSeconds() + 60 }, 'AAAA'),
        );
      }
    });
    it('answers 401 to HS256 signed with the JWKS document as the secret', async () => {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      const jwks = await res.text();
      await expectRefusedEverywhere(
        app,
        await hs256({ sub: 'user-a', aud: 'tray', exp: nowSeconds() + 60 }, { kid: 'k1' }, jwks),
      );
    });
    it('does not fetch the JWKS once per bad token (unknown kids cannot turn the API into a request amplifier)', () => {
      // An unknown kid fetches the key set at most once per cooldown (JWKS_COOLDOWN_MS, 5 s).
      expect(jwksRequests).to.be.below(10);
    });
  });

  after(() => {
    reportFigures('api JWT attacks', { requests: statuses.length, statuses: tally(statuses) });
  });
});
