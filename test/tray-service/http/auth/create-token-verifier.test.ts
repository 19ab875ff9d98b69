import { generateKeyPairSync } from 'node:crypto';
import { expect } from 'chai';
import { exportSPKI, generateKeyPair, SignJWT, UnsecuredJWT, type JWTPayload } from 'jose';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { exportJWK } from 'jose';
import request from 'supertest';
import { resolveJwtConfig } from '../../../../shared/config/tray-api-config.ts';
import { AppError } from '../../../../shared/errors/app-error.ts';
import { cacheVerifiedTokens } from '../../../../tray-service/http/auth/cache-verified-tokens.ts';
import {
  createTokenVerifier,
  verifiedUntil,
} from '../../../../tray-service/http/auth/create-token-verifier.ts';
import { MAX_TARGET_ID_LENGTH, MAX_USER_ID_LENGTH } from '../../../../tray-service/domain/id-limits.ts';
import { createFailedAuthLimit } from '../../../../tray-service/http/rate-limit/failed-auth-limit.ts';
import { startKeyServer, type KeyServer } from '../../../support/key-server.ts';
import { recordingLogger } from '../../../support/recording-logger.ts';
import { seedRecords } from '../../../support/seed-tray.ts';
import { uniqueName } from '../../../support/suite-resources.ts';
import { TEST_SECRET, tokenFor, useTrayApi } from '../../api/support/api-harness.ts';

const secret = new TextEncoder().encode(TEST_SECRET);
const sign = (claims: JWTPayload, alg = 'HS256') =>
  new SignJWT(claims).setProtectedHeader({ alg }).setIssuedAt();

/** The verifier's failure, for asserting its kind (UNAVAILABLE vs UNAUTHORIZED). */
async function failureOf(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected the verification to fail');
}

describe('createTokenVerifier (docs/contract.md#api-served)', () => {
  describe('with JWT_SECRET (HS256)', () => {
    const verify = createTokenVerifier(resolveJwtConfig({ JWT_SECRET: TEST_SECRET }));

    it('returns the user id from sub', async () => {
      const token = await tokenFor('user-1');
      expect((await verify(token)).userId).to.equal('user-1');
    });

    it('takes a userId claim when there is no sub', async () => {
      const token = await sign({ userId: 42 }).setExpirationTime('1h').sign(secret);
      expect((await verify(token)).userId).to.equal('42');
    });

    it('rejects a token naming no user', async () => {
      const token = await sign({}).setExpirationTime('1h').sign(secret);
      await expect(verify(token)).to.be.rejectedWith(AppError, 'token names no user');
    });

    it('rejects a user id with a control character (U+0000 cannot even be stored)', async () => {
      // C1 controls too: U+009B is a terminal's CSI, as ESC [ is.
      for (const sub of ['user-1\u0000', 'user-1\n', 'user-1\u007f', 'user-1\u0080', 'bob\u009b[31m']) {
        const token = await sign({}).setSubject(sub).setExpirationTime('1h').sign(secret);
        await expect(verify(token)).to.be.rejectedWith(AppError, 'token names no user');
      }
    });

    it('rejects a look-alike user id: all whitespace, or holding an invisible format character or a line or paragraph separator', async () => {
      const lookAlikes = [
        '   ',
        '\u00A0\u3000',
        'alice\u200B',
        'al\u200Dice',
        '\uFEFFalice',
        'ali\u00ADce',
        '\u202Eecila',
        '\u2067alice\u2069',
        'alice\u2028',
        'alice\u2029bob',
      ];
      for (const id of lookAlikes) {
        for (const claims of [{ sub: id }, { userId: id }]) {
          const token = await sign(claims).setExpirationTime('1h').sign(secret);
          await expect(verify(token), JSON.stringify(claims)).to.be.rejectedWith(
            AppError,
            'token names no user',
          );
        }
      }
      // Spaces inside an id, and letters of any script, still name a user.
      for (const id of ['ana maria', ' ana', 'ecila', 'أليس', 'émile']) {
        const token = await sign({ sub: id }).setExpirationTime('1h').sign(secret);
        expect((await verify(token)).userId).to.equal(id);
      }
    });

    it('rejects a user id longer than MAX_USER_ID_LENGTH characters, as sub or userId', async () => {
      const longest = 'u'.repeat(MAX_USER_ID_LENGTH);
      expect(
        (await verify(await sign({ sub: longest }).setExpirationTime('1h').sign(secret))).userId,
      ).to.equal(longest);
      for (const claims of [{ sub: `${longest}u` }, { userId: `${longest}u` }]) {
        const token = await sign(claims).setExpirationTime('1h').sign(secret);
        await expect(verify(token), Object.keys(claims)[0]).to.be.rejectedWith(
          AppError,
          'token names no user',
        );
      }
    });

    it('rejects a user id that is not well-formed UTF-16 (a lone surrogate), as sub or userId', async () => {
      // Stored, a lone surrogate becomes U+FFFD: these ids would all share the tray of "victim\uFFFD".
      for (const id of ['victim\uD800', 'victim\uDFFF', '\uDC00victim', 'a\uDBFF\uDBFFb']) {
        for (const claims of [{ sub: id }, { userId: id }]) {
          const token = await sign(claims).setExpirationTime('1h').sign(secret);
          await expect(verify(token), JSON.stringify(claims)).to.be.rejectedWith(
            AppError,
            'token names no user',
          );
        }
      }
      const paired = await sign({ sub: 'victim\uD83D\uDE00' }).setExpirationTime('1h').sign(secret);
      expect((await verify(paired)).userId).to.equal('victim\u{1F600}');
      const replacement = await sign({ sub: 'victim\uFFFD' }).setExpirationTime('1h').sign(secret);
      expect((await verify(replacement)).userId).to.equal('victim\uFFFD');
    });

    it('rejects an expired token', async () => {
      const token = await sign({ sub: 'u' })
        .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
        .sign(secret);
      await expect(verify(token)).to.be.rejectedWith(AppError, 'token has expired');
    });

    it('rejects a token without exp', async () => {
      const token = await sign({ sub: 'u' }).sign(secret);
      await expect(verify(token)).to.be.rejectedWith(AppError, 'token claim "exp" is invalid');
    });

    it('rejects a tampered payload', async () => {
      const [header, , signature] = (await tokenFor('user-1')).split('.');
      const forged = Buffer.from(JSON.stringify({ sub: 'admin', exp: 9_999_999_999 })).toString('base64url');
      await expect(verify(`${header}.${forged}.${signature}`)).to.be.rejectedWith(
        AppError,
        'signature is invalid',
      );
    });

    it('rejects a token signed with another secret', async () => {
      const token = await tokenFor('user-1', {}, 'another-secret-of-at-least-32-characters');
      await expect(verify(token)).to.be.rejectedWith(AppError, 'signature is invalid');
    });

    it('rejects alg: none', async () => {
      const token = new UnsecuredJWT({ sub: 'user-1' }).setExpirationTime('1h').encode();
      await expect(verify(token)).to.be.rejectedWith(AppError, 'token algorithm is not accepted');
    });

    it('rejects an algorithm outside the list (HS512 when HS256 is configured)', async () => {
      const token = await sign({ sub: 'u' }, 'HS512').setExpirationTime('1h').sign(secret);
      await expect(verify(token)).to.be.rejectedWith(AppError, 'algorithm is not accepted');
    });
  });

  describe('with JWT_ISSUER and JWT_AUDIENCE set', () => {
    const verify = createTokenVerifier(
      resolveJwtConfig({ JWT_SECRET: TEST_SECRET, JWT_ISSUER: 'https://issuer', JWT_AUDIENCE: 'tray' }),
    );
    const base = () => sign({ sub: 'u' }).setExpirationTime('1h');

    it('accepts a token with both', async () => {
      const token = await base().setIssuer('https://issuer').setAudience('tray').sign(secret);
      expect((await verify(token)).userId).to.equal('u');
    });

    it('rejects a wrong issuer', async () => {
      const token = await base().setIssuer('https://evil').setAudience('tray').sign(secret);
      await expect(verify(token)).to.be.rejectedWith(AppError, 'token claim "iss" is invalid');
    });

    it('rejects a wrong audience', async () => {
      const token = await base().setIssuer('https://issuer').setAudience('other').sign(secret);
      await expect(verify(token)).to.be.rejectedWith(AppError, 'token claim "aud" is invalid');
    });
  });

  describe('with JWT_MAX_TOKEN_AGE', () => {
    const now = () => Math.floor(Date.now() / 1000);
    /** Valid until the year 3000: only a maximum age bounds such a token. */
    const farFuture = 32_503_680_000;
    const verify = createTokenVerifier(
      resolveJwtConfig({ JWT_SECRET: TEST_SECRET, JWT_MAX_TOKEN_AGE: 3600 }),
    );

    it('accepts a token issued within the maximum age, whatever its exp', async () => {
      const token = await sign({ sub: 'u' })
        .setIssuedAt(now() - 60)
        .setExpirationTime(farFuture)
        .sign(secret);
      expect((await verify(token)).userId).to.equal('u');
    });

    it('says the token is accepted until iat plus the maximum age, not its exp, so a stream ends then', async () => {
      const iat = now() - 60;
      const token = await sign({ sub: 'u' }).setIssuedAt(iat).setExpirationTime(farFuture).sign(secret);
      // The verifier counts whole seconds: it takes the token through the last second of its age.
      expect(verifiedUntil(await verify(token))).to.equal((iat + 3600 + 1) * 1000);
      const soon = now() + 120;
      const shortLived = await sign({ sub: 'u' }).setIssuedAt(iat).setExpirationTime(soon).sign(secret);
      expect(verifiedUntil(await verify(shortLived))).to.equal(soon * 1000);
    });

    // jose compares whole seconds: a fractional iat or exp put the end up to a second off, later
    // than jose's for an iat, earlier for an exp.
    it('says when a token with fractional times ends as the verifier counts it', async () => {
      const iat = now() - 60 + 0.9;
      const token = await sign({ sub: 'u' }).setIssuedAt(iat).setExpirationTime(farFuture).sign(secret);
      expect(verifiedUntil(await verify(token))).to.equal((Math.floor(iat) + 3600 + 1) * 1000);
      const soon = now() + 120.5;
      const shortLived = await sign({ sub: 'u' }).setIssuedAt(iat).setExpirationTime(soon).sign(secret);
      expect(verifiedUntil(await verify(shortLived))).to.equal(Math.ceil(soon) * 1000);
    });

    // It ended a second before the verifier stopped taking the token: a stream opened in that
    // second was told `expired` at once, and reconnected with the same token, again and again.
    it('says a token in the last second of its age is accepted for the rest of that second', async () => {
      const token = await sign({ sub: 'u' })
        .setIssuedAt(now() - 3600)
        .setExpirationTime(farFuture)
        .sign(secret);
      const verified = await verify(token);
      expect(verifiedUntil(verified)).to.be.above(Date.now());
    });

    it('refuses a token issued longer ago than the maximum age, though its exp is far away', async () => {
      const token = await sign({ sub: 'u' })
        .setIssuedAt(now() - 3700)
        .setExpirationTime(farFuture)
        .sign(secret);
      const error = await failureOf(verify(token));
      expect(error.kind).to.equal('UNAUTHORIZED');
      expect(error.message).to.equal('token is older than the maximum token age');
    });

    it('refuses a token without iat (its age is unknown) or issued in the future', async () => {
      const noIat = await new SignJWT({ sub: 'u' })
        .setProtectedHeader({ alg: 'HS256' })
        .setExpirationTime('1h')
        .sign(secret);
      await expect(verify(noIat)).to.be.rejectedWith(AppError, 'token claim "iat" is invalid');
      const future = await sign({ sub: 'u' })
        .setIssuedAt(now() + 600)
        .setExpirationTime('1h')
        .sign(secret);
      await expect(verify(future)).to.be.rejectedWith(AppError, 'token claim "iat" is invalid');
    });

    it('unset, keeps today’s rule: exp alone, however far, and iat optional', async () => {
      const unbounded = createTokenVerifier(resolveJwtConfig({ JWT_SECRET: TEST_SECRET }));
      const token = await new SignJWT({ sub: 'u' })
        .setProtectedHeader({ alg: 'HS256' })
        .setExpirationTime(farFuture)
        .sign(secret);
      expect((await unbounded(token)).userId).to.equal('u');
    });
  });

  describe('with JWT_CLOCK_TOLERANCE (an issuer whose clock is off from this host’s)', () => {
    const now = () => Math.floor(Date.now() / 1000);
    const strict = createTokenVerifier(
      resolveJwtConfig({ JWT_SECRET: TEST_SECRET, JWT_MAX_TOKEN_AGE: 3600 }),
    );
    const tolerant = createTokenVerifier(
      resolveJwtConfig({ JWT_SECRET: TEST_SECRET, JWT_MAX_TOKEN_AGE: 3600, JWT_CLOCK_TOLERANCE: 30 }),
    );

    it('accepts a token issued, or valid from, up to that far in the future', async () => {
      const early = await sign({ sub: 'u' })
        .setIssuedAt(now() + 20)
        .setNotBefore(now() + 20)
        .setExpirationTime('1h')
        .sign(secret);
      await expect(strict(early)).to.be.rejectedWith(AppError, 'is invalid');
      expect((await tolerant(early)).userId).to.equal('u');
      const tooEarly = await sign({ sub: 'u' })
        .setIssuedAt(now() + 60)
        .setExpirationTime('1h')
        .sign(secret);
      await expect(tolerant(tooEarly)).to.be.rejectedWith(AppError, 'token claim "iat" is invalid');
    });

    it('accepts a token up to that long after its exp, and says so, so a stream it opens lasts as long', async () => {
      const exp = now() - 10;
      const late = await sign({ sub: 'u' })
        .setIssuedAt(now() - 60)
        .setExpirationTime(exp)
        .sign(secret);
      await expect(strict(late)).to.be.rejectedWith(AppError, 'token has expired');
      expect(verifiedUntil(await tolerant(late))).to.equal((exp + 30) * 1000);
      const gone = await sign({ sub: 'u' })
        .setIssuedAt(now() - 120)
        .setExpirationTime(now() - 60)
        .sign(secret);
      await expect(tolerant(gone)).to.be.rejectedWith(AppError, 'token has expired');
    });
  });

  describe('with a refused audience (the admin JWTs’, JWT_AUDIENCE unset)', () => {
    const verify = createTokenVerifier({
      ...resolveJwtConfig({ JWT_SECRET: TEST_SECRET }),
      refusedAudience: 'tray-admin',
    });
    const withAudience = (aud?: string | string[]) =>
      sign(aud === undefined ? { sub: 'u' } : { sub: 'u', aud })
        .setExpirationTime('1h')
        .sign(secret);

    it('refuses a token for that audience, alone or among others', async () => {
      for (const aud of ['tray-admin', ['tray-app', 'tray-admin']])
        await expect(verify(await withAudience(aud)), JSON.stringify(aud)).to.be.rejectedWith(
          AppError,
          'token claim "aud" is invalid',
        );
    });

    // jose checks `aud` only against a configured audience: a number or an object reached the
    // refused-audience check, which threw a TypeError (a 500, logged as an error on every call).
    it('refuses a token whose aud is neither a string nor a list of strings, as a 401', async () => {
      for (const aud of [5, {}, [5], null])
        await expect(
          verify(
            await sign({ sub: 'u', aud } as unknown as JWTPayload)
              .setExpirationTime('1h')
              .sign(secret),
          ),
          JSON.stringify(aud),
        ).to.be.rejectedWith(AppError, 'token claim "aud" is invalid');
    });

    it('accepts a token without an audience or for another one, as before', async () => {
      for (const aud of [undefined, 'tray-app', ['tray-app', 'tray-admins']])
        expect((await verify(await withAudience(aud))).userId, JSON.stringify(aud)).to.equal('u');
    });
  });

  describe('with JWT_PUBLIC_KEY (RS256)', () => {
    let keys: Awaited<ReturnType<typeof generateKeyPair>>;
    let verify: ReturnType<typeof createTokenVerifier>;
    before(async () => {
      keys = await generateKeyPair('RS256', { extractable: true });
      verify = createTokenVerifier(resolveJwtConfig({ JWT_PUBLIC_KEY: await exportSPKI(keys.publicKey) }));
    });

    it('accepts a token signed with the private key', async () => {
      const token = await sign({ sub: 'rs-user' }, 'RS256').setExpirationTime('1h').sign(keys.privateKey);
      expect((await verify(token)).userId).to.equal('rs-user');
    });

    it('rejects an HS256 token signed with the public key as secret (algorithm confusion)', async () => {
      const pem = new TextEncoder().encode(await exportSPKI(keys.publicKey));
      const token = await sign({ sub: 'u' }).setExpirationTime('1h').sign(pem);
      await expect(verify(token)).to.be.rejectedWith(AppError, 'algorithm is not accepted');
    });

    it('rejects a token signed with another key', async () => {
      const other = await generateKeyPair('RS256');
      const token = await sign({ sub: 'u' }, 'RS256').setExpirationTime('1h').sign(other.privateKey);
      await expect(verify(token)).to.be.rejectedWith(AppError, 'signature is invalid');
    });
  });

  describe('with JWT_PUBLIC_KEY (ES256)', () => {
    it('accepts a token signed with the private key', async () => {
      const keys = await generateKeyPair('ES256', { extractable: true });
      const verify = createTokenVerifier(
        resolveJwtConfig({ JWT_PUBLIC_KEY: await exportSPKI(keys.publicKey) }),
      );
      const token = await sign({ sub: 'es-user' }, 'ES256').setExpirationTime('1h').sign(keys.privateKey);
      expect((await verify(token)).userId).to.equal('es-user');
    });
  });

  describe('with JWT_JWKS_URL', () => {
    let server: Server;
    let keys: Awaited<ReturnType<typeof generateKeyPair>>;
    before(async () => {
      keys = await generateKeyPair('RS256', { extractable: true });
      const jwk = { ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
      server = createServer((_req, res) => {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ keys: [jwk] }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('verifies with the key the JWKS names', async () => {
      const { port } = server.address() as AddressInfo;
      const verify = createTokenVerifier(
        resolveJwtConfig({ JWT_JWKS_URL: `http://127.0.0.1:${port}/jwks.json`, JWT_AUDIENCE: 'tray' }),
      );
      const token = await new SignJWT({ sub: 'jwks-user', aud: 'tray' })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setExpirationTime('1h')
        .sign(keys.privateKey);
      expect((await verify(token)).userId).to.equal('jwks-user');
    });
  });

  // A key set in rotation holds the old key and the new one, both fit for the token's algorithm.
  // A token that names no `kid` matched both, and jose leaves trying each to its caller: the token
  // was refused (and counted as a guess), for as long as the rotation lasted.
  describe('with JWT_JWKS_URL holding two keys of one algorithm, and tokens without a kid', () => {
    let server: Server;
    let old: Awaited<ReturnType<typeof generateKeyPair>>;
    let added: Awaited<ReturnType<typeof generateKeyPair>>;
    before(async () => {
      [old, added] = await Promise.all([
        generateKeyPair('RS256', { extractable: true }),
        generateKeyPair('RS256', { extractable: true }),
      ]);
      const jwks = {
        keys: await Promise.all(
          [old, added].map(async ({ publicKey }) => ({
            ...(await exportJWK(publicKey)),
            alg: 'RS256',
            use: 'sig',
          })),
        ),
      };
      server = createServer((_req, res) => {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify(jwks));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    const verifier = () => {
      const { port } = server.address() as AddressInfo;
      return createTokenVerifier(
        resolveJwtConfig({ JWT_JWKS_URL: `http://127.0.0.1:${port}/jwks.json`, JWT_AUDIENCE: 'tray' }),
      );
    };
    const signed = (key: typeof old.privateKey, claims: Record<string, unknown> = {}) =>
      new SignJWT({ sub: 'rotating-user', aud: 'tray', ...claims })
        .setProtectedHeader({ alg: 'RS256' })
        .setExpirationTime('1h')
        .sign(key);

    it('verifies a token signed with either key', async () => {
      const verify = verifier();
      for (const { privateKey } of [old, added])
        expect((await verify(await signed(privateKey))).userId).to.equal('rotating-user');
    });

    it('still refuses one signed with neither, and one whose claims are wrong', async () => {
      const other = await generateKeyPair('RS256');
      const verify = verifier();
      expect((await failureOf(verify(await signed(other.privateKey)))).kind).to.equal('UNAUTHORIZED');
      const wrongAudience = await failureOf(verify(await signed(added.privateKey, { aud: 'elsewhere' })));
      expect(wrongAudience.message).to.match(/aud/);
    });
  });

  // A key jose will not use (an RSA key under 2,048 bits, still listed) threw a TypeError that
  // ended the search before the key that signed the token.
  describe('with JWT_JWKS_URL listing a key jose will not use before the one that signed', () => {
    let server: Server;
    let good: Awaited<ReturnType<typeof generateKeyPair>>;
    before(async () => {
      // jose makes none under 2,048 bits; Node's crypto still does.
      const short = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' });
      good = await generateKeyPair('RS256', { extractable: true });
      const jwks = {
        keys: [
          { ...short, alg: 'RS256', use: 'sig' },
          { ...(await exportJWK(good.publicKey)), alg: 'RS256', use: 'sig' },
        ],
      };
      server = createServer((_req, res) => {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify(jwks));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('verifies a token without a kid with the key that signed it', async () => {
      const { port } = server.address() as AddressInfo;
      const verify = createTokenVerifier(
        resolveJwtConfig({ JWT_JWKS_URL: `http://127.0.0.1:${port}/jwks.json`, JWT_AUDIENCE: 'tray' }),
      );
      const token = await new SignJWT({ sub: 'rotating-user', aud: 'tray' })
        .setProtectedHeader({ alg: 'RS256' })
        .setExpirationTime('1h')
        .sign(good.privateKey);
      expect((await verify(token)).userId).to.equal('rotating-user');
    });
  });

  describe('with JWT_JWKS_URL, the key server failing', () => {
    let keyServer: KeyServer;
    /** A failed fetch is remembered this long; short, so the tests can wait it out. */
    const keyRetryMs = 200;
    before(async () => {
      keyServer = await startKeyServer();
    });
    after(() => keyServer.stop());
    beforeEach(() => {
      keyServer.mode = 'ok';
      keyServer.requests = 0;
    });

    const verifier = () =>
      createTokenVerifier(
        resolveJwtConfig({ JWT_JWKS_URL: keyServer.url, JWT_AUDIENCE: keyServer.audience }),
        { keyRetryMs },
      );

    for (const mode of ['503', 'not-json'] as const) {
      it(`answers a valid token with UNAVAILABLE, not a token error, when the key server answers ${mode}`, async () => {
        keyServer.mode = mode;
        const error = await failureOf(verifier()(await keyServer.sign('u')));
        expect(error.kind).to.equal('UNAVAILABLE');
        expect(error.status).to.equal(503);
        expect(error.message).to.equal('token keys are unavailable');
      });
    }

    it('says in Retry-After when the key server is asked again: the rest of the retry interval', async () => {
      keyServer.mode = '503';
      const verify = createTokenVerifier(
        resolveJwtConfig({ JWT_JWKS_URL: keyServer.url, JWT_AUDIENCE: keyServer.audience }),
        { keyRetryMs: 4_000 },
      );
      const token = await keyServer.sign('u');
      const first = await failureOf(verify(token));
      expect(first.headers).to.deep.include({ 'Retry-After': '4' });
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      const later = await failureOf(verify(token));
      expect(later.headers).to.deep.include({ 'Retry-After': '3' });
      expect(keyServer.requests).to.equal(1);
    });

    it('answers UNAVAILABLE when the key server refuses the connection', async () => {
      await keyServer.stop();
      try {
        const error = await failureOf(verifier()(await keyServer.sign('u')));
        expect(error.kind).to.equal('UNAVAILABLE');
      } finally {
        await keyServer.start();
      }
    });

    it('asks a failing key server once per retry interval, not once per token', async () => {
      keyServer.mode = '503';
      const verify = verifier();
      const token = await keyServer.sign('u');
      for (let i = 0; i < 5; i++) {
        expect((await failureOf(verify(token))).kind).to.equal('UNAVAILABLE');
      }
      expect(keyServer.requests).to.equal(1);
      await sleep(keyRetryMs + 50);
      expect((await failureOf(verify(token))).kind).to.equal('UNAVAILABLE');
      expect(keyServer.requests).to.equal(2);
    });

    it('verifies again once the key server is back and the retry interval has passed', async () => {
      keyServer.mode = '503';
      const verify = verifier();
      const token = await keyServer.sign('back');
      expect((await failureOf(verify(token))).kind).to.equal('UNAVAILABLE');
      keyServer.mode = 'ok';
      await sleep(keyRetryMs + 50);
      expect((await verify(token)).userId).to.equal('back');
    });

    it('keeps serving from keys already fetched while the key server is down', async () => {
      const verify = verifier();
      expect((await verify(await keyServer.sign('a'))).userId).to.equal('a');
      keyServer.mode = '503';
      expect((await verify(await keyServer.sign('b'))).userId).to.equal('b');
      // Within the cooldown after a fetch an unknown key id asks no one: still a token the keys do not cover.
      expect((await failureOf(verify(await keyServer.sign('c', { kid: 'k9' })))).kind).to.equal(
        'UNAUTHORIZED',
      );
      expect(keyServer.requests).to.equal(1);
    });

    it('verifies a token of a key added since the last fetch once the key set may be fetched again, within seconds', async () => {
      const verify = verifier();
      expect((await verify(await keyServer.sign('a'))).userId).to.equal('a');
      await keyServer.addKey('k-new');
      // Right after a fetch: refused without asking (a made-up kid must not fetch on every call).
      expect((await failureOf(verify(await keyServer.sign('b', { kid: 'k-new' })))).kind).to.equal(
        'UNAUTHORIZED',
      );
      expect(keyServer.requests).to.equal(1);
      // Seconds, not jose's default of half a minute.
      await sleep(5_100);
      expect((await verify(await keyServer.sign('b', { kid: 'k-new' }))).userId).to.equal('b');
      expect(keyServer.requests).to.equal(2);
    });

    it('keeps serving the keys it last fetched once they are due for a refresh the key server cannot answer, for as long as STALE_KEYS_MAX_MS', async () => {
      // Keys due for a refresh after 300 ms, served while stale for 1.5 s at most.
      const { logger, lines } = recordingLogger();
      const verify = createTokenVerifier(
        resolveJwtConfig({ JWT_JWKS_URL: keyServer.url, JWT_AUDIENCE: keyServer.audience }),
        { keyRetryMs, keyMaxAgeMs: 300, staleKeysMaxMs: 1_500, logger },
      );
      expect((await verify(await keyServer.sign('a'))).userId).to.equal('a');
      keyServer.mode = '503';
      await sleep(400);
      // Due for a refresh, which fails: the keys fetched before still verify. Five calls at once
      // share that one fetch, and its failure is logged once.
      const tokens = await Promise.all([1, 2, 3, 4, 5].map((n) => keyServer.sign(`b${n}`)));
      const verified = await Promise.all(tokens.map((token) => verify(token)));
      expect(verified.map((one) => one.userId)).to.deep.equal(['b1', 'b2', 'b3', 'b4', 'b5']);
      expect(keyServer.requests).to.equal(2);
      expect(lines.map((line) => [line.msg, line.staleKeys])).to.deep.equal([
        ['token key fetch failed', true],
      ]);
      // A token of a key they do not hold may be of one the server added since: not known, so 503,
      // never 401 (which would count against the caller's address).
      expect((await failureOf(verify(await keyServer.sign('c', { kid: 'k9' })))).kind).to.equal(
        'UNAVAILABLE',
      );
      // Past the bound, stale keys are not trusted any more.
      await sleep(1_300);
      expect((await failureOf(verify(await keyServer.sign('d')))).kind).to.equal('UNAVAILABLE');
      expect(lines.at(-1)).to.include({ msg: 'token key fetch failed', staleKeys: false });
      // And a key server back serves again, keys fresh.
      keyServer.mode = 'ok';
      await sleep(keyRetryMs + 50);
      expect((await verify(await keyServer.sign('e'))).userId).to.equal('e');
    });

    it('still refuses a token whose key the server does not list, as an invalid token', async () => {
      const error = await failureOf(verifier()(await keyServer.sign('u', { kid: 'k9' })));
      expect(error.kind).to.equal('UNAUTHORIZED');
      expect(error.message).to.equal('token key is unknown');
    });
  });
});

describe('tray API authentication', () => {
  const api = useTrayApi();

  it('answers a request without a token with 401 and WWW-Authenticate', async () => {
    const res = await request(api.app()).get('/notifications/v3').expect(401);
    expect(res.body).to.deep.equal({
      status: 'error',
      code: 401000,
      message: 'missing bearer token (Authorization: Bearer <JWT>)',
    });
    expect(res.headers['www-authenticate']).to.equal('Bearer');
  });

  // Counted as a failed authentication (it is a guess), it was answered as no token at all: a client
  // sending a mangled token was told to send one, with no invalid_token to act on.
  it('answers a bearer token of characters no JWT has as an invalid token, not a missing one', async () => {
    const res = await request(api.app())
      .get('/notifications/v3')
      .set('Authorization', 'Bearer abc!def')
      .expect(401);
    expect(res.body).to.deep.equal({ status: 'error', code: 401000, message: 'token is invalid' });
    expect(res.headers['www-authenticate']).to.equal('Bearer error="invalid_token"');
  });

  it('serves a caller with an RS256 token when configured with JWT_PUBLIC_KEY', async () => {
    const keys = await generateKeyPair('RS256', { extractable: true });
    const app = api.app({
      verifyToken: createTokenVerifier(
        resolveJwtConfig({ JWT_PUBLIC_KEY: await exportSPKI(keys.publicKey) }),
      ),
    });
    const token = await sign({ sub: 'rs-caller' }, 'RS256').setExpirationTime('1h').sign(keys.privateKey);
    const res = await request(app)
      .get('/notifications/v3')
      .set('Authorization', `Bearer ${token}`)
      .expect(200);
    expect(res.body).to.deep.equal({ data: { totalUnreadCount: 0, totalUnseenCount: 0 } });
    await request(app)
      .get('/notifications/v3')
      .set('Authorization', `Bearer ${await tokenFor('u')}`)
      .expect(401);
  });

  it('answers a tampered token with 401', async () => {
    const [header, , signature] = (await tokenFor('user-1')).split('.');
    const forged = Buffer.from(JSON.stringify({ sub: 'admin', exp: 9_999_999_999 })).toString('base64url');
    await request(api.app())
      .get('/notifications/v3')
      .set('Authorization', `Bearer ${header}.${forged}.${signature}`)
      .expect(401);
  });

  it('answers an expired token with 401', async () => {
    const token = await sign({ sub: 'u' })
      .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
      .sign(secret);
    const res = await request(api.app())
      .get('/notifications/v3')
      .set('Authorization', `Bearer ${token}`)
      .expect(401);
    expect(res.body.message).to.equal('token has expired');
  });

  it('answers alg: none with 401', async () => {
    const token = new UnsecuredJWT({ sub: 'u' }).setExpirationTime('1h').encode();
    await request(api.app()).get('/notifications/v3').set('Authorization', `Bearer ${token}`).expect(401);
  });

  it('refuses a lone-surrogate sub with 401, leaving the tray its stored form names untouched', async () => {
    // The database keeps a lone surrogate as U+FFFD: "victim\uDFFF" would be "victim\uFFFD".
    const victim = 'victim\uFFFD';
    await seedRecords(api.storage, [
      { userId: victim, verb: 'comment', targetId: 'lone-1', lastUpdate: Date.now() - 2000 },
      { userId: victim, verb: 'comment', targetId: 'lone-2', lastUpdate: Date.now() - 1000 },
    ]);
    const victimAuth = `Bearer ${await tokenFor(victim)}`;
    const before = await request(api.app())
      .get('/notifications/v3')
      .set('Authorization', victimAuth)
      .expect(200);
    expect(before.body.data.totalUnreadCount).to.equal(2);

    const intruder = `Bearer ${await tokenFor('victim\uDFFF')}`;
    for (const call of [
      () => request(api.app()).get('/notifications/v3/history'),
      () => request(api.app()).get('/notifications/v3/mark-all-as-read'),
      () => request(api.app()).delete('/notifications/v3/delete-all'),
    ]) {
      const res = await call().set('Authorization', intruder);
      expect(res.status, JSON.stringify(res.body)).to.equal(401);
      expect(res.body).to.deep.equal({
        status: 'error',
        code: 401000,
        message: 'token names no user (sub or userId claim)',
      });
    }

    const after = await request(api.app())
      .get('/notifications/v3')
      .set('Authorization', victimAuth)
      .expect(200);
    expect(after.body.data.totalUnreadCount).to.equal(2);
    const history = await request(api.app())
      .get('/notifications/v3/history')
      .set('Authorization', victimAuth)
      .expect(200);
    expect(history.body.data).to.have.length(2);
  });

  it('refuses a user id too long to store with 401 on every call, and serves the longest one on every write', async () => {
    // Three bytes of UTF-8 each: the most room a character of a user id can take in an index.
    const wide = (length: number, from = 0x4e00) =>
      Array.from({ length }, (_, i) => String.fromCharCode(from + ((i * 7919) % 20_000))).join('');
    const app = api.app();
    const writes: [string, (auth: string) => request.Test][] = [
      [
        'POST v2/last-read',
        (auth) => request(app).post('/notifications/v2/last-read').set('Authorization', auth),
      ],
      [
        'DELETE v3/delete-all',
        (auth) => request(app).delete('/notifications/v3/delete-all').set('Authorization', auth),
      ],
      [
        'GET v3/mark-all-as-read',
        (auth) => request(app).get('/notifications/v3/mark-all-as-read').set('Authorization', auth),
      ],
      [
        'PUT v3/mutes',
        (auth) =>
          request(app)
            .put('/notifications/v3/mutes')
            .set('Authorization', auth)
            .send({ targetType: 'post', targetId: wide(MAX_TARGET_ID_LENGTH, 0x5e00) }),
      ],
      [
        'POST block/members',
        (auth) =>
          request(app)
            .post('/block/members')
            .set('Authorization', auth)
            .send({ blockUserId: wide(MAX_USER_ID_LENGTH, 0x6e00) }),
      ],
    ];
    const tooLong = `Bearer ${await tokenFor(wide(MAX_USER_ID_LENGTH + 1))}`;
    const reads: typeof writes = [
      ['GET v3', (auth) => request(app).get('/notifications/v3').set('Authorization', auth)],
    ];
    for (const [name, call] of [...reads, ...writes]) {
      const res = await call(tooLong);
      expect(res.status, `${name}: ${res.text}`).to.equal(401);
      expect(res.body.message).to.equal('token names no user (sub or userId claim)');
    }
    const longest = `Bearer ${await tokenFor(wide(MAX_USER_ID_LENGTH))}`;
    for (const [name, call] of writes) {
      const res = await call(longest);
      expect(res.status, `${name}: ${res.text}`).to.equal(200);
    }
  });

  it('never takes a user id from the query: it is refused, and the token decides', async () => {
    const auth = `Bearer ${await tokenFor('caller')}`;
    const refused = await request(api.app())
      .get('/notifications/v3?userId=victim')
      .set('Authorization', auth)
      .expect(400);
    expect(refused.body.message).to.equal('query: unknown parameter userId');
    const res = await request(api.app()).get('/notifications/v3').set('Authorization', auth).expect(200);
    expect(res.body.data.totalUnreadCount).to.equal(0);
  });

  describe('with JWT_JWKS_URL and the key server down', () => {
    let keyServer: KeyServer;
    before(async () => {
      keyServer = await startKeyServer();
    });
    after(() => keyServer.stop());

    it('answers 503 (never 401, never 429) while it fails or refuses, and 200 once it is back', async () => {
      const keyRetryMs = 200;
      const limit = 3;
      const app = api.app({
        verifyToken: cacheVerifiedTokens(
          createTokenVerifier(
            resolveJwtConfig({ JWT_JWKS_URL: keyServer.url, JWT_AUDIENCE: keyServer.audience }),
            { keyRetryMs },
          ),
        ),
        failedAuth: createFailedAuthLimit({
          redis: api.redis,
          points: limit,
          windowMs: 60_000,
          keyPrefix: uniqueName('auth-fail'),
        }),
      });
      const token = await keyServer.sign('jwks-caller');
      const call = () => request(app).get('/notifications/v3').set('Authorization', `Bearer ${token}`);
      const expectUnavailable = async () => {
        for (let i = 0; i <= limit + 1; i++) {
          const res = await call();
          expect(res.status, JSON.stringify(res.body)).to.equal(503);
          expect(res.body).to.deep.equal({
            status: 'error',
            code: 503000,
            message: 'token keys are unavailable',
          });
          expect(res.headers['www-authenticate']).to.equal(undefined);
          // When the key server is asked again (keyRetryMs after the failure), in whole seconds:
          // the client's retries of a 503 honour it.
          expect(res.headers['retry-after']).to.equal('1');
        }
      };

      keyServer.mode = '503';
      await expectUnavailable();
      // One request to the key server for the whole burst: the failure is remembered.
      expect(keyServer.requests).to.equal(1);
      await sleep(keyRetryMs + 50);
      await keyServer.stop();
      try {
        await expectUnavailable();
      } finally {
        await keyServer.start();
      }
      keyServer.mode = 'ok';
      await sleep(keyRetryMs + 50);
      const res = await call().expect(200);
      expect(res.body).to.deep.equal({ data: { totalUnreadCount: 0, totalUnseenCount: 0 } });
    });
  });
});
