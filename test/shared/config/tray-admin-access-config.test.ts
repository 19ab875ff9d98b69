import { expect } from 'chai';
import { SignJWT } from 'jose';
import {
  adminJwtKeys,
  checkAdminPort,
  resolveAdminJwt,
  userJwtKeys,
} from '../../../shared/config/tray-admin-access-config.ts';
import { resolveJwtConfig } from '../../../shared/config/tray-api-config.ts';
import { loadTrayConfig } from '../../../shared/config/tray-config.ts';
import { createTokenVerifier } from '../../../tray-service/http/auth/create-token-verifier.ts';
import { ConfigError } from '../../../shared/errors/config-error.ts';

describe('admin access configuration', () => {
  describe('with nothing set', () => {
    it('has no admin credential, a loopback admin listener on 8082, no trusted proxy and a read-only dashboard', () => {
      const config = loadTrayConfig({});
      expect(config.ADMIN_TOKEN).to.equal(undefined);
      expect(resolveAdminJwt(config)).to.equal(undefined);
      expect(config).to.include({
        ADMIN_PORT: 8082,
        ADMIN_HOST: '127.0.0.1',
        ADMIN_TRUST_PROXY: false,
        QUEUE_DASHBOARD_WRITE: 'off',
      });
    });
    it('keeps the admin listener on loopback when HOST opens the public ones', () => {
      expect(loadTrayConfig({ HOST: '0.0.0.0' }).ADMIN_HOST).to.equal('127.0.0.1');
    });
  });

  describe('ADMIN_TRUST_PROXY', () => {
    const cases: [string, unknown][] = [
      ['off', false],
      ['loopback', ['loopback']],
      ['10.0.0.0/8, 192.168.1.7,::1', ['10.0.0.0/8', '192.168.1.7', '::1']],
    ];
    for (const [value, parsed] of cases) {
      it(`reads "${value}" as Express's trust proxy value`, () => {
        expect(loadTrayConfig({ ADMIN_TRUST_PROXY: value }).ADMIN_TRUST_PROXY).to.deep.equal(parsed);
      });
    }
  });

  const bad: [Record<string, string>, string][] = [
    [{ ADMIN_TOKEN: 'short' }, 'ADMIN_TOKEN: expected at least 32 characters'],
    // A bearer token is read as one word of printable ASCII (require-admin.ts): such a token signed
    // in through the form, and every `Authorization: Bearer` call with it was refused.
    [
      { ADMIN_TOKEN: 'correct horse battery staple 2024 admin' },
      'ADMIN_TOKEN: expected printable ASCII without spaces',
    ],
    [{ ADMIN_TOKEN: `${'a'.repeat(32)}\tb` }, 'ADMIN_TOKEN: expected printable ASCII without spaces'],
    [{ ADMIN_TOKEN: `${'a'.repeat(32)}\u0001` }, 'ADMIN_TOKEN: expected printable ASCII without spaces'],
    [{ ADMIN_TOKEN: `${'a'.repeat(32)}é` }, 'ADMIN_TOKEN: expected printable ASCII without spaces'],
    [{ ADMIN_PORT: 'x' }, 'ADMIN_PORT: expected a TCP port number'],
    [{ ADMIN_HOST: 'not a host' }, 'ADMIN_HOST: expected an address to listen on'],
    [{ ADMIN_TRUST_PROXY: 'yes' }, 'ADMIN_TRUST_PROXY: "yes" is not an IP address or CIDR'],
    [
      { ADMIN_TRUST_PROXY: '10.0.0.0/33' },
      'ADMIN_TRUST_PROXY: "10.0.0.0/33" has a prefix length outside 0-32',
    ],
    // A hop count trusts whatever the nearest client says, so any client could fake its address
    // (and with it the per-address limit on failed sign-ins).
    [{ ADMIN_TRUST_PROXY: '1' }, 'ADMIN_TRUST_PROXY: "1" would trust X-Forwarded-For from any client'],
    [{ QUEUE_DASHBOARD_WRITE: 'yes' }, 'QUEUE_DASHBOARD_WRITE: expected "on" or "off"'],
    [{ ADMIN_BEHIND_TLS: 'true' }, 'ADMIN_BEHIND_TLS: expected "on" or "off"'],
  ];
  for (const [env, message] of bad) {
    describe(`with ${JSON.stringify(Object.entries(env)[0]!.join('='))}`, () => {
      it('fails naming the variable', () => {
        expect(() => loadTrayConfig(env)).to.throw(message);
      });
    });
  }

  it('accepts an ADMIN_TOKEN of any printable ASCII without spaces', () => {
    const token = `${'A'.repeat(16)}!"#$%&'()*+,-./:;<=>?@[\\]^_\`{|}~`;
    expect(loadTrayConfig({ ADMIN_TOKEN: token }).ADMIN_TOKEN).to.equal(token);
  });

  describe('a non-loopback ADMIN_HOST (the admin listener speaks plain http)', () => {
    for (const host of ['0.0.0.0', '::', '10.0.0.7', 'admin.internal']) {
      it(`refuses ${host} without ADMIN_BEHIND_TLS=on, in one line naming both variables`, () => {
        expect(() => loadTrayConfig({ ADMIN_HOST: host })).to.throw(
          new RegExp(
            `^Invalid configuration: ADMIN_HOST: ${host} is not loopback .*ADMIN_BEHIND_TLS=on[^\n]*$`,
          ),
        );
      });
    }
    it('accepts one with ADMIN_BEHIND_TLS=on (a TLS proxy in front) and that proxy trusted', () => {
      expect(
        loadTrayConfig({ ADMIN_HOST: '0.0.0.0', ADMIN_BEHIND_TLS: 'on', ADMIN_TRUST_PROXY: '10.0.0.0/8' }),
      ).to.include({ ADMIN_HOST: '0.0.0.0', ADMIN_BEHIND_TLS: 'on' });
    });
    // Every client's address would be the proxy's: twenty wrong sign-ins from anyone refused every
    // operator for the limit's window.
    it('refuses ADMIN_BEHIND_TLS=on without ADMIN_TRUST_PROXY, on loopback too, naming the variable', () => {
      for (const host of ['0.0.0.0', '127.0.0.1'])
        expect(() => loadTrayConfig({ ADMIN_HOST: host, ADMIN_BEHIND_TLS: 'on' })).to.throw(
          /^Invalid configuration: ADMIN_TRUST_PROXY: not set with ADMIN_BEHIND_TLS=on: name the TLS proxy/,
        );
    });
    for (const host of ['127.0.0.1', '127.0.0.2', '::1', 'localhost']) {
      it(`accepts the loopback ${host} as it is`, () => {
        expect(loadTrayConfig({ ADMIN_HOST: host }).ADMIN_BEHIND_TLS).to.equal('off');
      });
    }
  });

  describe('admin JWTs with a key of their own (ADMIN_JWT_SECRET, ADMIN_JWT_JWKS_URL)', () => {
    const USER_KEY = 'u'.repeat(40);
    const ADMIN_KEY = 'a'.repeat(40);
    const pair = { ADMIN_JWT_AUDIENCE: 'tray-admin', ADMIN_JWT_ISSUER: 'ops' };
    const adminToken = (key: string) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('ops-ana')
        .setAudience('tray-admin')
        .setIssuer('ops')
        .setExpirationTime('5m')
        .sign(new TextEncoder().encode(key));
    /** The admin verifier as tray-service/main.ts builds it. */
    const verifierFor = (env: Record<string, string>) => {
      const config = loadTrayConfig({ JWT_SECRET: USER_KEY, ...pair, ...env });
      return createTokenVerifier(adminJwtKeys(resolveAdminJwt(config)!, resolveJwtConfig(config)));
    };

    it('with ADMIN_JWT_SECRET, refuse an admin JWT signed with the user tokens’ key', async () => {
      const verify = verifierFor({ ADMIN_JWT_SECRET: ADMIN_KEY });
      await expect(verify(await adminToken(USER_KEY))).to.be.rejectedWith('token signature is invalid');
      expect((await verify(await adminToken(ADMIN_KEY))).userId).to.equal('ops-ana');
    });
    it('without one, keep today’s rule: the user tokens’ key, with the admin audience and issuer', async () => {
      const verify = verifierFor({});
      expect((await verify(await adminToken(USER_KEY))).userId).to.equal('ops-ana');
    });
    it('are refused by the user tokens’ verifier as tray-service/main.ts builds it', async () => {
      const config = loadTrayConfig({ JWT_SECRET: USER_KEY, ...pair });
      const keys = resolveJwtConfig(config);
      const verifyUser = createTokenVerifier(userJwtKeys(keys, resolveAdminJwt(config)));
      await expect(verifyUser(await adminToken(USER_KEY))).to.be.rejectedWith('token claim "aud" is invalid');
      // Without admin JWTs there is no admin audience to refuse.
      expect(userJwtKeys(keys, undefined)).to.equal(keys);
    });
    it('ADMIN_JWT_MAX_TOKEN_AGE bounds admin JWTs, JWT_MAX_TOKEN_AGE the user tokens only', async () => {
      const issuedAgo = (seconds: number, key: string) =>
        new SignJWT({})
          .setProtectedHeader({ alg: 'HS256' })
          .setSubject('ops-ana')
          .setAudience('tray-admin')
          .setIssuer('ops')
          .setIssuedAt(Math.floor(Date.now() / 1000) - seconds)
          .setExpirationTime('5m')
          .sign(new TextEncoder().encode(key));
      const bounded = verifierFor({ ADMIN_JWT_MAX_TOKEN_AGE: '10m' });
      expect((await bounded(await issuedAgo(60, USER_KEY))).userId).to.equal('ops-ana');
      await expect(bounded(await issuedAgo(3600, USER_KEY))).to.be.rejectedWith(
        'token is older than the maximum token age',
      );
      // The user tokens' maximum is theirs: an admin JWT without iat is not refused for it.
      const userBounded = verifierFor({ JWT_MAX_TOKEN_AGE: '60' });
      expect((await userBounded(await adminToken(USER_KEY))).userId).to.equal('ops-ana');
      expect(() => loadTrayConfig({ ADMIN_JWT_MAX_TOKEN_AGE: 'later' })).to.throw(
        'ADMIN_JWT_MAX_TOKEN_AGE: expected',
      );
    });
    it('refuse ADMIN_JWT_MAX_TOKEN_AGE while they are off: it would bound nothing, in silence', () => {
      expect(() =>
        resolveAdminJwt(loadTrayConfig({ JWT_SECRET: USER_KEY, ADMIN_JWT_MAX_TOKEN_AGE: '10m' })),
      ).to.throw(
        ConfigError,
        'ADMIN_JWT_MAX_TOKEN_AGE: bounds admin JWTs, which are off: set ADMIN_JWT_AUDIENCE and ADMIN_JWT_ISSUER too, or unset it',
      );
    });
    it('take JWT_CLOCK_TOLERANCE too: one host’s clock against the issuers’', async () => {
      const early = (key: string) =>
        new SignJWT({})
          .setProtectedHeader({ alg: 'HS256' })
          .setSubject('ops-ana')
          .setAudience('tray-admin')
          .setIssuer('ops')
          .setNotBefore(Math.floor(Date.now() / 1000) + 20)
          .setExpirationTime('5m')
          .sign(new TextEncoder().encode(key));
      await expect(verifierFor({})(await early(USER_KEY))).to.be.rejectedWith('token claim "nbf" is invalid');
      const tolerant = verifierFor({ ADMIN_JWT_SECRET: ADMIN_KEY, JWT_CLOCK_TOLERANCE: '30' });
      expect((await tolerant(await early(ADMIN_KEY))).userId).to.equal('ops-ana');
    });
    it('read ADMIN_JWT_JWKS_URL as a JWKS key source', () => {
      const config = loadTrayConfig({ ...pair, ADMIN_JWT_JWKS_URL: 'https://id.example/admin-jwks.json' });
      expect(resolveAdminJwt(config)?.source).to.deep.include({ kind: 'jwks' });
    });
    const bad: [Record<string, string>, string][] = [
      [{ ADMIN_JWT_SECRET: 'short' }, 'ADMIN_JWT_SECRET: expected a secret of at least 32 characters'],
      [{ ADMIN_JWT_JWKS_URL: 'http://id.localhost/jwks' }, 'ADMIN_JWT_JWKS_URL: expected an https:// URL'],
      [
        { ...pair, ADMIN_JWT_SECRET: ADMIN_KEY, ADMIN_JWT_JWKS_URL: 'https://id.example/jwks' },
        'ADMIN_JWT_SECRET, ADMIN_JWT_JWKS_URL: set at most one',
      ],
      [{ ADMIN_JWT_SECRET: ADMIN_KEY }, 'ADMIN_JWT_AUDIENCE: admin JWTs need both'],
      // A JWKS of the operators' identity provider signs its other applications' tokens too: only
      // the admin audience (always required) tells an admin JWT from theirs.
      [
        { ADMIN_JWT_JWKS_URL: 'https://id.example/jwks' },
        'ADMIN_JWT_AUDIENCE: admin JWTs need both ADMIN_JWT_AUDIENCE and ADMIN_JWT_ISSUER',
      ],
      [
        { ...pair, JWT_SECRET: USER_KEY, ADMIN_JWT_SECRET: USER_KEY },
        'ADMIN_JWT_SECRET: must differ from JWT_SECRET',
      ],
    ];
    for (const [env, message] of bad) {
      it(`fail naming the variable: ${message}`, () => {
        expect(() => resolveAdminJwt(loadTrayConfig(env))).to.throw(message);
      });
    }
  });

  describe('admin JWTs', () => {
    it('are on with both an audience and an issuer', () => {
      const config = loadTrayConfig({
        ADMIN_JWT_AUDIENCE: 'tray-admin',
        ADMIN_JWT_ISSUER: 'https://id.example',
      });
      expect(resolveAdminJwt(config)).to.deep.equal({ audience: 'tray-admin', issuer: 'https://id.example' });
    });
    it('fail naming the missing half of the pair', () => {
      expect(() => resolveAdminJwt(loadTrayConfig({ ADMIN_JWT_AUDIENCE: 'tray-admin' }))).to.throw(
        'ADMIN_JWT_ISSUER: admin JWTs need both ADMIN_JWT_AUDIENCE and ADMIN_JWT_ISSUER',
      );
      expect(() => resolveAdminJwt(loadTrayConfig({ ADMIN_JWT_ISSUER: 'x' }))).to.throw(
        'ADMIN_JWT_AUDIENCE:',
      );
    });
    it('fail when their audience is the user tokens’ audience', () => {
      const config = loadTrayConfig({
        JWT_AUDIENCE: 'tray',
        ADMIN_JWT_AUDIENCE: 'tray',
        ADMIN_JWT_ISSUER: 'x',
      });
      expect(() => resolveAdminJwt(config)).to.throw('ADMIN_JWT_AUDIENCE: must differ from JWT_AUDIENCE');
    });
  });

  describe('ADMIN_PORT equal to TRAY_PORT', () => {
    it('fails naming ADMIN_PORT', () => {
      expect(() => checkAdminPort(loadTrayConfig({ TRAY_PORT: '9000', ADMIN_PORT: '9000' }), true)).to.throw(
        'ADMIN_PORT: must differ from TRAY_PORT (9000)',
      );
    });

    it('fails naming METRICS_PORT on the tray API’s or the admin listener’s port', () => {
      expect(() =>
        checkAdminPort(loadTrayConfig({ TRAY_PORT: '9000', METRICS_PORT: '9000' }), true),
      ).to.throw('METRICS_PORT: must differ from TRAY_PORT (9000)');
      expect(() =>
        checkAdminPort(loadTrayConfig({ ADMIN_PORT: '9001', METRICS_PORT: '9001' }), true),
      ).to.throw('METRICS_PORT: must differ from ADMIN_PORT (9001)');
    });

    it('is no clash on an API process without admin credentials, which opens no admin listener', () => {
      expect(() =>
        checkAdminPort(loadTrayConfig({ TRAY_PORT: '9000', ADMIN_PORT: '9000' }), false),
      ).not.to.throw();
      expect(() =>
        checkAdminPort(loadTrayConfig({ TRAY_PORT: '9000', METRICS_PORT: '9000' }), false),
      ).to.throw('METRICS_PORT: must differ from TRAY_PORT (9000)');
    });

    it('is no clash on a worker-only process, which has no admin listener', () => {
      expect(() =>
        checkAdminPort(loadTrayConfig({ TRAY_PORT: '9000', ADMIN_PORT: '9000', TRAY_ROLE: 'worker' }), true),
      ).not.to.throw();
    });

    // A worker still serves health and readiness on TRAY_PORT: the clash failed only at listen.
    it('still fails naming METRICS_PORT on TRAY_PORT on a worker-only process', () => {
      expect(() =>
        checkAdminPort(
          loadTrayConfig({ TRAY_PORT: '9000', METRICS_PORT: '9000', TRAY_ROLE: 'worker' }),
          true,
        ),
      ).to.throw('METRICS_PORT: must differ from TRAY_PORT (9000)');
      expect(() =>
        checkAdminPort(
          loadTrayConfig({ ADMIN_PORT: '9001', METRICS_PORT: '9001', TRAY_ROLE: 'worker' }),
          true,
        ),
      ).not.to.throw();
    });
  });
});
