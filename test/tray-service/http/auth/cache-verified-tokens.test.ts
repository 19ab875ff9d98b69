import { expect } from 'chai';
import { SignJWT } from 'jose';
import { resolveJwtConfig } from '../../../../shared/config/tray-api-config.ts';
import { AppError } from '../../../../shared/errors/app-error.ts';
import { cacheVerifiedTokens } from '../../../../tray-service/http/auth/cache-verified-tokens.ts';
import {
  createTokenVerifier,
  type TokenVerifier,
  type VerifiedToken,
} from '../../../../tray-service/http/auth/create-token-verifier.ts';
import { TEST_SECRET, tokenFor } from '../../api/support/api-harness.ts';

const NOW = 1_800_000_000_000;
const EXP = NOW / 1000 + 3600;

/** A verifier that accepts `good-*` tokens (exp as given by `expOf`) and counts its calls. */
function countingVerifier(expOf: (token: string) => number = () => EXP) {
  const calls: string[] = [];
  const verify: TokenVerifier = async (token) => {
    calls.push(token);
    if (!token.startsWith('good-')) throw new AppError('UNAUTHORIZED', 'token signature is invalid');
    const verified: VerifiedToken = {
      userId: token.slice(5),
      claims: { sub: token.slice(5), exp: expOf(token) },
    };
    return verified;
  };
  return { verify, calls };
}

describe('cacheVerifiedTokens', () => {
  let clock = NOW;
  const now = () => clock;
  beforeEach(() => (clock = NOW));

  it('verifies a token once and gives the same result while it is valid', async () => {
    const inner = countingVerifier();
    const verify = cacheVerifiedTokens(inner.verify, { now });
    const first = await verify('good-ana');
    clock += 30_000;
    expect(await verify('good-ana')).to.equal(first);
    expect(inner.calls).to.deep.equal(['good-ana']);
  });

  it('verifies every other token on its own (one token never answers for another)', async () => {
    const inner = countingVerifier();
    const verify = cacheVerifiedTokens(inner.verify, { now });
    expect((await verify('good-ana')).userId).to.equal('ana');
    expect((await verify('good-bob')).userId).to.equal('bob');
    expect(inner.calls).to.deep.equal(['good-ana', 'good-bob']);
  });

  it('keeps a verification no longer than the token is young enough (JWT_MAX_TOKEN_AGE), though its exp is later', async () => {
    const calls: string[] = [];
    const inner: TokenVerifier = async (token) => {
      calls.push(token);
      if (clock >= NOW + 1_000)
        throw new AppError('UNAUTHORIZED', 'token is older than the maximum token age');
      return { userId: 'ana', claims: { sub: 'ana', exp: EXP }, ageEndsAt: NOW + 1_000 };
    };
    const verify = cacheVerifiedTokens(inner, { now });
    await verify('good-ana');
    clock += 999;
    await verify('good-ana');
    expect(calls).to.have.length(1);
    clock += 1;
    await expect(verify('good-ana')).to.be.rejectedWith(AppError, 'older than the maximum token age');
    expect(calls).to.have.length(2);
  });

  it('keeps no refusal of a token it cannot tell is signed: a forged one is verified, and refused, on every call', async () => {
    const inner = countingVerifier();
    const verify = cacheVerifiedTokens(inner.verify, { now });
    await expect(verify('forged')).to.be.rejectedWith(AppError, 'signature is invalid');
    await expect(verify('forged')).to.be.rejectedWith(AppError, 'signature is invalid');
    expect(inner.calls).to.deep.equal(['forged', 'forged']);
  });

  it('verifies again once the token reaches its exp', async () => {
    const inner = countingVerifier(() => NOW / 1000 + 10);
    const verify = cacheVerifiedTokens(inner.verify, { now });
    await verify('good-ana');
    clock = NOW + 9_999;
    await verify('good-ana');
    expect(inner.calls).to.have.lengthOf(1);
    clock = NOW + 10_000;
    await verify('good-ana');
    expect(inner.calls).to.have.lengthOf(2);
  });

  it('keeps a verification no longer than maxAgeMs, however long the token is valid', async () => {
    const inner = countingVerifier();
    const verify = cacheVerifiedTokens(inner.verify, { now, maxAgeMs: 1_000 });
    await verify('good-ana');
    clock = NOW + 999;
    await verify('good-ana');
    clock = NOW + 1_000;
    await verify('good-ana');
    expect(inner.calls).to.have.lengthOf(2);
  });

  it('keeps at most maxEntries verifications, forgetting the oldest first', async () => {
    const inner = countingVerifier();
    const verify = cacheVerifiedTokens(inner.verify, { now, maxEntries: 2 });
    for (const token of ['good-a', 'good-b', 'good-c', 'good-c', 'good-b', 'good-a']) await verify(token);
    expect(inner.calls).to.deep.equal(['good-a', 'good-b', 'good-c', 'good-a']);
  });

  it('keeps nothing for a verification without a usable exp', async () => {
    const inner = countingVerifier(() => Number.NaN);
    const verify = cacheVerifiedTokens(inner.verify, { now });
    await verify('good-ana');
    await verify('good-ana');
    expect(inner.calls).to.have.lengthOf(2);
  });

  describe('over the real verifier (HS256)', () => {
    const verify = cacheVerifiedTokens(createTokenVerifier(resolveJwtConfig({ JWT_SECRET: TEST_SECRET })));

    it('refuses a token that expired after it was cached', async () => {
      // At least a second left: `+ 1` may be the next millisecond, before the first verification.
      const exp = Math.floor(Date.now() / 1000) + 2;
      const token = await new SignJWT({})
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('user-1')
        .setExpirationTime(exp)
        .sign(new TextEncoder().encode(TEST_SECRET));
      expect((await verify(token)).userId).to.equal('user-1');
      await new Promise((resolve) => setTimeout(resolve, exp * 1000 - Date.now() + 10));
      await expect(verify(token)).to.be.rejectedWith(AppError, 'token has expired');
    });

    /** The real verifier, counting the tokens it is asked to verify; the cache's clock is `now`. */
    const countingReal = (audience?: string) => {
      const real = createTokenVerifier(
        resolveJwtConfig({ JWT_SECRET: TEST_SECRET, ...(audience ? { JWT_AUDIENCE: audience } : {}) }),
      );
      const calls: string[] = [];
      const counted: TokenVerifier = (token) => {
        calls.push(token);
        return real(token);
      };
      return { calls, verify: cacheVerifiedTokens(counted, { now, maxAgeMs: 60_000 }) };
    };
    const signed = (claims: { exp: number; nbf?: number; aud?: string }) => {
      const jwt = new SignJWT(claims.aud === undefined ? {} : { aud: claims.aud })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('user-1')
        .setExpirationTime(claims.exp);
      return (claims.nbf === undefined ? jwt : jwt.setNotBefore(claims.nbf)).sign(
        new TextEncoder().encode(TEST_SECRET),
      );
    };
    const seconds = () => Math.floor(Date.now() / 1000);

    // An app stuck sending an expired token (every poll of every user after a token service outage)
    // cost a signature check per call, with no limit: its signature verified, so it is no guess.
    it('verifies a token refused for good (expired) once, and refuses it again from memory for maxAgeMs', async () => {
      const { calls, verify } = countingReal();
      const token = await signed({ exp: seconds() - 60 });
      for (let n = 0; n < 3; n += 1)
        await expect(verify(token)).to.be.rejectedWith(AppError, 'token has expired');
      expect(calls).to.have.lengthOf(1);
      clock += 60_000;
      await expect(verify(token)).to.be.rejectedWith(AppError, 'token has expired');
      expect(calls).to.have.lengthOf(2);
    });

    it('keeps the refusal of a signed token of another audience (JWT_AUDIENCE) too', async () => {
      const { calls, verify } = countingReal('tray');
      const token = await signed({ exp: seconds() + 3_600, aud: 'another-app' });
      await expect(verify(token)).to.be.rejectedWith(AppError, 'token claim "aud" is invalid');
      await expect(verify(token)).to.be.rejectedWith(AppError, 'token claim "aud" is invalid');
      expect(calls).to.have.lengthOf(1);
    });

    it('verifies a token not valid yet (nbf ahead: an issuer whose clock runs ahead) on every call', async () => {
      const { calls, verify } = countingReal();
      const token = await signed({ exp: seconds() + 3_600, nbf: seconds() + 600 });
      await expect(verify(token)).to.be.rejectedWith(AppError, 'token claim "nbf" is invalid');
      await expect(verify(token)).to.be.rejectedWith(AppError, 'token claim "nbf" is invalid');
      expect(calls).to.have.lengthOf(2);
    });

    it('verifies a forged token on every call (counted against its address instead)', async () => {
      const { calls, verify } = countingReal();
      const [header, payload] = (await tokenFor('user-1')).split('.');
      const forged = `${header}.${payload}.${Buffer.from('not the signature').toString('base64url')}`;
      await expect(verify(forged)).to.be.rejectedWith(AppError, 'signature is invalid');
      await expect(verify(forged)).to.be.rejectedWith(AppError, 'signature is invalid');
      expect(calls).to.have.lengthOf(2);
    });

    it('still refuses a tampered copy of a cached token', async () => {
      const token = await tokenFor('user-1');
      await verify(token);
      const [header, , signature] = token.split('.');
      const forged = Buffer.from(JSON.stringify({ sub: 'admin', exp: 9_999_999_999 })).toString('base64url');
      await expect(verify(`${header}.${forged}.${signature}`)).to.be.rejectedWith(
        AppError,
        'signature is invalid',
      );
    });
  });
});
