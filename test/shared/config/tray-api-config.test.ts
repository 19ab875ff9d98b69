import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { ConfigError } from '../../../shared/errors/config-error.ts';
import { resolveJwtConfig } from '../../../shared/config/tray-api-config.ts';
import { loadTrayConfig } from '../../../shared/config/tray-config.ts';

const SECRET = 'a-secret-of-at-least-32-characters-long';
const rsaPem = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({
  type: 'spki',
  format: 'pem',
});

describe('tray API configuration', () => {
  describe('with nothing set', () => {
    it('uses the platform defaults: 100 calls per 5 s, 10 records per page, block list on', () => {
      const config = loadTrayConfig({});
      expect(config).to.include({
        RATE_LIMIT_CALLS: 100,
        RATE_LIMIT_WINDOW_MS: 5000,
        TRAY_PAGE_SIZE: 10,
        BLOCK_API: 'on',
        NETWORK_ID: 'default',
      });
    });
  });

  // Split on commas alone, `RS256,` (a variable left unset after the comma) stopped start-up with
  // the list of every algorithm, as if RS256 were wrong; every other list names such an entry.
  describe('JWT_ALGORITHMS', () => {
    it('names an empty entry by its place, and an unknown one by its name', () => {
      for (const [value, message] of [
        ['HS256,', 'JWT_ALGORITHMS: entry 2 is empty'],
        ['HS256,,HS384', 'JWT_ALGORITHMS: entry 2 is empty'],
        ['HS256, none', 'JWT_ALGORITHMS: "none" is not a JWS algorithm the tray verifies; expected'],
      ])
        expect(() => loadTrayConfig({ JWT_SECRET: SECRET, JWT_ALGORITHMS: value }), value)
          .to.throw(ConfigError)
          .with.property('message')
          .that.includes(message);
    });

    // A secret pasted here (swapped lines of a template) was repeated in the error, and so in the log.
    it('names an entry that cannot be an algorithm by its place, never repeating it', () => {
      const pasted = `${SECRET}x`;
      expect(() => loadTrayConfig({ JWT_SECRET: SECRET, JWT_ALGORITHMS: `HS256,${pasted}` }))
        .to.throw(ConfigError)
        .with.property('message')
        .that.includes('JWT_ALGORITHMS: entry 2 is not a JWS algorithm the tray verifies; expected')
        .and.does.not.include(pasted.slice(0, 8));
    });

    it('reads a list with spaces', () => {
      expect(
        loadTrayConfig({ JWT_SECRET: SECRET, JWT_ALGORITHMS: ' HS256 , HS512' }).JWT_ALGORITHMS,
      ).to.deep.equal(['HS256', 'HS512']);
    });
  });

  describe('resolveJwtConfig', () => {
    it('fails naming the three variables when no key source is set', () => {
      expect(() => resolveJwtConfig({}))
        .to.throw(ConfigError)
        .with.property('message')
        .that.matches(
          /JWT_SECRET: no token key: set exactly one of JWT_SECRET, JWT_PUBLIC_KEY or JWT_JWKS_URL$/,
        );
    });

    it('fails naming both when two key sources are set', () => {
      expect(() =>
        resolveJwtConfig({ JWT_SECRET: SECRET, JWT_JWKS_URL: 'https://idp/jwks', JWT_AUDIENCE: 'tray' }),
      )
        .to.throw(ConfigError)
        .with.property('message')
        .that.includes('JWT_SECRET, JWT_JWKS_URL: set exactly one');
    });

    it('defaults to HS256 for a secret', () => {
      expect(resolveJwtConfig({ JWT_SECRET: SECRET }).source.algorithms).to.deep.equal(['HS256']);
    });

    it('takes the algorithm from the key type of a PEM key, also with \\n escapes', () => {
      const oneLine = String(rsaPem).replaceAll('\n', '\\n');
      expect(resolveJwtConfig({ JWT_PUBLIC_KEY: oneLine }).source.algorithms).to.deep.equal(['RS256']);
    });

    it('refuses an RS algorithm with a secret', () => {
      expect(() => resolveJwtConfig({ JWT_SECRET: SECRET, JWT_ALGORITHMS: ['RS256'] }))
        .to.throw(ConfigError)
        .with.property('message')
        .that.includes('JWT_ALGORITHMS: RS256 needs a public key');
    });

    it('refuses an HS algorithm with a public key', () => {
      expect(() => resolveJwtConfig({ JWT_PUBLIC_KEY: String(rsaPem), JWT_ALGORITHMS: ['HS256'] }))
        .to.throw(ConfigError)
        .with.property('message')
        .that.includes('JWT_ALGORITHMS: HS256 is an HMAC algorithm');
    });

    // Accepted, every token would fail to verify (401), and each count against its address.
    it('refuses an algorithm the public key cannot verify, naming those it can', () => {
      const pem = (curve: string) =>
        generateKeyPairSync('ec', { namedCurve: curve }).publicKey.export({ type: 'spki', format: 'pem' });
      for (const [key, algorithms, message] of [
        [
          String(rsaPem),
          ['ES256'],
          'JWT_ALGORITHMS: ES256 cannot be verified with an RSA key; use RS256, RS384, RS512, PS256, PS384 or PS512',
        ],
        [
          String(pem('P-384')),
          ['ES256'],
          'JWT_ALGORITHMS: ES256 cannot be verified with an EC P-384 key; use ES384',
        ],
        [
          String(pem('P-256')),
          ['ES256', 'EdDSA'],
          'JWT_ALGORITHMS: EdDSA cannot be verified with an EC P-256 key; use ES256',
        ],
      ] as const) {
        expect(() => resolveJwtConfig({ JWT_PUBLIC_KEY: key, JWT_ALGORITHMS: [...algorithms] }))
          .to.throw(ConfigError)
          .with.property('message')
          .that.includes(message);
      }
      expect(
        resolveJwtConfig({ JWT_PUBLIC_KEY: String(rsaPem), JWT_ALGORITHMS: ['RS256', 'PS256'] }).source
          .algorithms,
      ).to.deep.equal(['RS256', 'PS256']);
      expect(
        resolveJwtConfig({ JWT_PUBLIC_KEY: String(pem('P-521')), JWT_ALGORITHMS: ['ES512'] }).source
          .algorithms,
      ).to.deep.equal(['ES512']);
    });

    it('refuses a JWKS URL without JWT_AUDIENCE, naming it: another application of the issuer would pass', () => {
      const error = (() => {
        try {
          resolveJwtConfig({
            JWT_JWKS_URL: 'https://idp.example/.well-known/jwks.json',
            JWT_ISSUER: 'https://idp',
          });
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      expect(error).to.be.instanceOf(ConfigError);
      expect((error as ConfigError).variables).to.deep.equal(['JWT_AUDIENCE']);
      expect((error as ConfigError).message).to.match(
        /JWT_AUDIENCE: required with JWT_JWKS_URL: .*other applications of the same identity provider/,
      );
    });

    it('takes a JWKS URL with JWT_AUDIENCE', () => {
      const config = resolveJwtConfig({ JWT_JWKS_URL: 'https://idp.example/jwks', JWT_AUDIENCE: 'tray' });
      expect(config.source.kind).to.equal('jwks');
      expect(config.audience).to.equal('tray');
    });

    // createPublicKey takes a private key too and derives its public half: the tray would hold a
    // key that can sign any user's tokens, which the asymmetric option exists to keep elsewhere.
    for (const [label, pem] of [
      ['PKCS#8', generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' })],
      [
        'RSA',
        generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
          type: 'pkcs1',
          format: 'pem',
        }),
      ],
      [
        'EC',
        generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'sec1', format: 'pem' }),
      ],
    ] as const) {
      it(`refuses a ${label} private key, saying so and showing none of it`, () => {
        const text = String(pem);
        expect(() => resolveJwtConfig({ JWT_PUBLIC_KEY: text.replaceAll('\n', '\\n') }))
          .to.throw(ConfigError)
          .with.property('message')
          .that.includes('JWT_PUBLIC_KEY: holds a private key')
          .and.does.not.include(text.split('\n')[1]);
      });
    }

    it('refuses a PEM that is not a public key', () => {
      expect(() => resolveJwtConfig({ JWT_PUBLIC_KEY: 'not a key' }))
        .to.throw(ConfigError)
        .with.property('message')
        .that.includes('JWT_PUBLIC_KEY: expected a PEM public key');
    });
  });

  describe('JWT_MAX_TOKEN_AGE', () => {
    it('is unset by default: no maximum token age, as before', () => {
      expect(resolveJwtConfig(loadTrayConfig({ JWT_SECRET: SECRET }))).not.to.have.property('maxTokenAge');
    });

    for (const [value, seconds] of [
      ['3600', 3600],
      ['90s', 90],
      ['30m', 1800],
      ['24h', 86_400],
      ['7d', 604_800],
    ] as const) {
      it(`reads ${value} as ${seconds} s and hands it to the verifier`, () => {
        const config = loadTrayConfig({ JWT_SECRET: SECRET, JWT_MAX_TOKEN_AGE: value });
        expect(config.JWT_MAX_TOKEN_AGE).to.equal(seconds);
        expect(resolveJwtConfig(config).maxTokenAge).to.equal(seconds);
      });
    }

    for (const value of ['0', 'soon', '1.5h', '-60', '24 hours', '1y']) {
      it(`refuses ${JSON.stringify(value)}, naming the variable`, () => {
        expect(() => loadTrayConfig({ JWT_SECRET: SECRET, JWT_MAX_TOKEN_AGE: value }))
          .to.throw(ConfigError, 'JWT_MAX_TOKEN_AGE: expected')
          .with.property('variables')
          .that.deep.equals(['JWT_MAX_TOKEN_AGE']);
      });
    }
  });

  describe('JWT_CLOCK_TOLERANCE', () => {
    it('is 0 by default: the time claims are taken as they are', () => {
      const config = loadTrayConfig({ JWT_SECRET: SECRET });
      expect(config.JWT_CLOCK_TOLERANCE).to.equal(0);
      expect(resolveJwtConfig(config)).not.to.have.property('clockTolerance');
    });

    it('reads whole seconds up to 300 and hands them to the verifier', () => {
      const config = loadTrayConfig({ JWT_SECRET: SECRET, JWT_CLOCK_TOLERANCE: '30' });
      expect(resolveJwtConfig(config).clockTolerance).to.equal(30);
    });

    for (const value of ['301', '-5', '30s', 'a bit']) {
      it(`refuses ${JSON.stringify(value)}, naming the variable`, () => {
        expect(() => loadTrayConfig({ JWT_SECRET: SECRET, JWT_CLOCK_TOLERANCE: value }))
          .to.throw(ConfigError, 'JWT_CLOCK_TOLERANCE: expected whole seconds from 0 to 300')
          .with.property('variables')
          .that.deep.equals(['JWT_CLOCK_TOLERANCE']);
      });
    }
  });

  describe('with bad values', () => {
    it('names each variable', () => {
      expect(() =>
        loadTrayConfig({
          JWT_SECRET: 'short',
          JWT_ALGORITHMS: 'none',
          RATE_LIMIT_WINDOW_MS: '1500',
          TRAY_PAGE_SIZE: '0',
        }),
      )
        .to.throw(ConfigError)
        .with.property('variables')
        .that.has.members(['JWT_SECRET', 'JWT_ALGORITHMS', 'RATE_LIMIT_WINDOW_MS', 'TRAY_PAGE_SIZE']);
    });
  });
});
