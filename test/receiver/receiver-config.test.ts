import { expect } from 'chai';
import { resolve } from 'node:path';
import { ConfigError } from '../../shared/errors/config-error.ts';
import { loadReceiverConfig } from '../../receiver/receiver-config.ts';

const secrets = { WEBHOOK_SECRETS: 'eu=s1,eu=s2,us=s3' };

describe('receiver configuration', () => {
  describe('with only WEBHOOK_SECRETS set', () => {
    it('uses the documented defaults', () => {
      const config = loadReceiverConfig(secrets);
      expect(config).to.deep.include({
        WEBHOOK_PATH: '/webhooks',
        WEBHOOK_ALLOWLIST: 'on',
        WEBHOOK_REGIONS: ['sg', 'eu', 'us'],
        WEBHOOK_ALLOW_CIDRS: [],
        TRUST_PROXY: { kind: 'none' },
        WEBHOOK_MAX_BODY_BYTES: 1024 * 1024,
        WEBHOOK_DEDUPE_SECONDS: 86_400,
        WEBHOOK_ENQUEUE_TIMEOUT_MS: 300,
        SPOOL_DIR: resolve('.data/receiver-spool'),
        WEBHOOK_TOLERANCE_SECONDS: 300,
        RECEIVER_KEEPALIVE_TIMEOUT_MS: 5_000,
      });
      expect(config.WEBHOOK_SECRETS.map((secret) => [secret.name, secret.keys.length])).to.deep.equal([
        ['eu', 2],
        ['us', 1],
      ]);
      expect(config.WEBHOOK_SECRETS.map(({ scheme }) => scheme)).to.deep.equal(['platform', 'platform']);
    });

    it('reads every platform signature from x-service-signature', () => {
      const headers = loadReceiverConfig(secrets).WEBHOOK_SECRETS.map((secret) =>
        secret.scheme === 'platform' ? secret.header : undefined,
      );
      expect(headers).to.deep.equal(['x-service-signature', 'x-service-signature']);
    });
  });

  describe('SPOOL_DIR', () => {
    it('is resolved from the working directory at start-up, so the start-up line names the folder', () => {
      expect(loadReceiverConfig({ ...secrets, SPOOL_DIR: 'spool' }).SPOOL_DIR).to.equal(
        resolve(process.cwd(), 'spool'),
      );
      expect(loadReceiverConfig({ ...secrets, SPOOL_DIR: '/var/spool/receiver' }).SPOOL_DIR).to.equal(
        '/var/spool/receiver',
      );
    });
  });

  describe('with a scheme and a header per webhook', () => {
    it('gives each webhook its own, and the bare value to those not named', () => {
      const config = loadReceiverConfig({
        WEBHOOK_SECRETS: `eu=s1,us=s3,acme=whsec_${Buffer.alloc(32, 1).toString('base64')}`,
        WEBHOOK_SIGNATURE_SCHEME: 'acme=standard-webhooks',
        WEBHOOK_SIGNATURE_HEADER: 'X-Platform-Signature, us=X-US-Signature',
        WEBHOOK_TOLERANCE_SECONDS: '60',
      });
      expect(
        config.WEBHOOK_SECRETS.map((secret) =>
          secret.scheme === 'platform'
            ? `${secret.name}:${secret.header}`
            : `${secret.name}:${secret.scheme}`,
        ),
      ).to.deep.equal(['eu:x-platform-signature', 'us:x-us-signature', 'acme:standard-webhooks']);
      expect(config.WEBHOOK_TOLERANCE_SECONDS).to.equal(60);
    });

    // The secret check read the name as written: mixed case and digits changed character kind often
    // enough to stop the start with "looks like a secret".
    it('takes a header name as its sender spells it (Shopify’s X-Shopify-Hmac-SHA256)', () => {
      for (const spelling of ['X-Shopify-Hmac-SHA256', 'X-Shopify-Hmac-Sha256']) {
        const config = loadReceiverConfig({
          WEBHOOK_SECRETS: 'shop=s1',
          WEBHOOK_SIGNATURE_HEADER: `shop=${spelling}`,
        });
        expect(
          config.WEBHOOK_SECRETS.map((secret) => secret.scheme === 'platform' && secret.header),
        ).to.deep.equal(['x-shopify-hmac-sha256']);
      }
    });
  });

  for (const [variable, value, message] of [
    ['WEBHOOK_REGIONS', 'eu,ap', '"ap" is not a region'],
    ['WEBHOOK_ALLOW_CIDRS', '10.0.0.0/8, 2130706433', '"2130706433" is not an IP address'],
    // Allowing every address is WEBHOOK_ALLOWLIST=off, which says so and warns.
    ['WEBHOOK_ALLOW_CIDRS', '0.0.0.0/0', '"0.0.0.0/0" allows every address'],
    ['WEBHOOK_ALLOW_CIDRS', '10.0.0.0/8, ::/0', '"::/0" allows every address'],
    ['WEBHOOK_ALLOW_CIDRS', '::ffff:0.0.0.0/96', '"0.0.0.0/0" allows every address'],
    // Two halves are every address as a /0 is; any range wider than one network's is refused.
    [
      'WEBHOOK_ALLOW_CIDRS',
      '0.0.0.0/1,128.0.0.0/1',
      '"0.0.0.0/1" is wider than /8 (IPv6: /16, or /7 inside fc00::/7) and allows a share of the internet',
    ],
    ['WEBHOOK_ALLOW_CIDRS', '2000::/3', '"2000::/3" is wider than /8 (IPv6: /16, or /7 inside fc00::/7)'],
    ['TRUST_PROXY', '0.0.0.0/0', '"0.0.0.0/0" trusts every address'],
    [
      'TRUST_PROXY',
      '128.0.0.0/1, 0.0.0.0/1',
      '"128.0.0.0/1" is wider than /8 (IPv6: /16, or /7 inside fc00::/7) and trusts a share of the internet',
    ],
    ['TRUST_PROXY', '1', '"1": a hop count trusts X-Forwarded-For from any client'],
    ['WEBHOOK_ENQUEUE_TIMEOUT_MS', '5000', 'expected a whole number from 1 to 1000'],
    ['WEBHOOK_PATH', 'webhooks', 'expected a path starting with "/"'],
    // The receiver's own routes: the webhook path would take them over (its 405 for a GET).
    ['WEBHOOK_PATH', '/healthz', '"/healthz" is the receiver\'s own route; choose another path'],
    ['WEBHOOK_PATH', '/readyz/', '"/readyz/" is the receiver\'s own route; choose another path'],
    ['WEBHOOK_PATH', '/Metrics', '"/Metrics" is the receiver\'s own route; choose another path'],
    ['WEBHOOK_SECRETS', 'eu=topsecret,,us=x', 'entry 2 is empty'],
    // The starter kit's placeholder pasted as it is, never repeated.
    ['WEBHOOK_SECRETS', 'main=<the topsecret from the admin panel>', 'entry 1 looks like a placeholder'],
    [
      'WEBHOOK_SIGNATURE_SCHEME',
      'eu=svix',
      'entry 1 (eu): not a scheme; expected platform or standard-webhooks',
    ],
    [
      'WEBHOOK_SIGNATURE_SCHEME',
      'EU=standard-webhooks',
      '"EU" is not a webhook of WEBHOOK_SECRETS (eu, us); did you mean "eu"?',
    ],
    ['WEBHOOK_SIGNATURE_HEADER', 'x sig', 'entry 1: not an HTTP header name'],
    ['WEBHOOK_SIGNATURE_HEADER', 'ue=x-sig', '"ue" is not a webhook of WEBHOOK_SECRETS (eu, us)'],
    // A secret pasted here would be logged at start-up as the header's name.
    [
      'WEBHOOK_SIGNATURE_HEADER',
      '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b',
      'entry 1: looks like a secret, not an HTTP header name (was a secret pasted here?)',
    ],
    [
      'WEBHOOK_SIGNATURE_HEADER',
      'eu=Qm9vT3hY7pLk2ZrW8vNc4aTs',
      'entry 1 (eu): looks like a secret, not an HTTP header name (was a secret pasted here?)',
    ],
    [
      'WEBHOOK_SIGNATURE_HEADER',
      'eu=whsec_topsecret',
      'entry 1 (eu): looks like a secret, not an HTTP header name (was a secret pasted here?)',
    ],
    ['WEBHOOK_TOLERANCE_SECONDS', '7200', 'expected a whole number from 1 to 3600'],
    ['RECEIVER_KEEPALIVE_TIMEOUT_MS', '0', 'expected a whole number from 1000 to 900000 (milliseconds)'],
    ['RECEIVER_KEEPALIVE_TIMEOUT_MS', '65s', 'expected a whole number from 1000 to 900000 (milliseconds)'],
    [
      'RECEIVER_KEEPALIVE_TIMEOUT_MS',
      '3600000',
      'expected a whole number from 1000 to 900000 (milliseconds)',
    ],
  ] as const) {
    describe(`with ${variable}=${value}`, () => {
      it('fails with one line naming the variable and the problem', () => {
        expect(() => loadReceiverConfig({ ...secrets, [variable]: value }))
          .to.throw(ConfigError)
          .with.property('message')
          .that.includes(`${variable}: ${message}`)
          .and.does.not.include('topsecret')
          .and.does.not.include('\n');
      });
    });
  }

  describe('with RECEIVER_KEEPALIVE_TIMEOUT_MS above a load balancer idle timeout (ALB: 60 s)', () => {
    it('reads it in milliseconds', () => {
      const config = loadReceiverConfig({ ...secrets, RECEIVER_KEEPALIVE_TIMEOUT_MS: '65000' });
      expect(config.RECEIVER_KEEPALIVE_TIMEOUT_MS).to.equal(65_000);
    });
  });

  describe('with a bare Base64 secret ending in "=="', () => {
    it('reads it whole as the secret of webhook "default", so its text is never a webhook name', () => {
      const config = loadReceiverConfig({ WEBHOOK_SECRETS: 'c2VjcmV0LXZhbHVl/TEyMzQ1Ng==' });
      expect(config.WEBHOOK_SECRETS.map(({ name }) => name)).to.deep.equal(['default']);
      expect(config.WEBHOOK_SECRETS[0]?.keys[0]?.export().toString('utf8')).to.equal(
        'c2VjcmV0LXZhbHVl/TEyMzQ1Ng==',
      );
    });

    it('refuses a bare whsec_ one of the wrong length without showing any of its text', () => {
      const encoded = Buffer.alloc(22, 1).toString('base64');
      expect(() =>
        loadReceiverConfig({
          WEBHOOK_SECRETS: `whsec_${encoded}`,
          WEBHOOK_SIGNATURE_SCHEME: 'standard-webhooks',
        }),
      )
        .to.throw(ConfigError)
        .with.property('message')
        .that.includes('WEBHOOK_SECRETS: entry 1 decodes to 22 bytes')
        .and.does.not.include(encoded.slice(0, 12));
    });
  });

  // A Standard Webhooks delivery is accepted from the tolerance before its timestamp to the
  // tolerance after it; only its webhook-id's dedupe mark stops a replay in that time.
  describe('with a dedupe window shorter than a Standard Webhooks delivery is accepted', () => {
    const standard = {
      WEBHOOK_SECRETS: `eu=s1,acme=whsec_${Buffer.alloc(24, 3).toString('base64')}`,
      WEBHOOK_SIGNATURE_SCHEME: 'acme=standard-webhooks',
    };

    for (const [dedupe, tolerance] of [
      ['300', undefined],
      ['599', '300'],
      // Ages are whole seconds and both edges pass: accepted for 601 s.
      ['600', '300'],
      ['3600', '3600'],
    ] as const) {
      it(`refuses WEBHOOK_DEDUPE_SECONDS=${dedupe} with WEBHOOK_TOLERANCE_SECONDS=${tolerance ?? '(300)'}, naming both`, () => {
        expect(() =>
          loadReceiverConfig({
            ...standard,
            WEBHOOK_DEDUPE_SECONDS: dedupe,
            WEBHOOK_TOLERANCE_SECONDS: tolerance,
          }),
        )
          .to.throw(ConfigError)
          .with.property('message')
          .that.matches(/WEBHOOK_DEDUPE_SECONDS: .*WEBHOOK_TOLERANCE_SECONDS/)
          .and.does.not.include('\n');
      });
    }

    it('accepts a window of twice the tolerance and a second', () => {
      const config = loadReceiverConfig({
        ...standard,
        WEBHOOK_DEDUPE_SECONDS: '601',
        WEBHOOK_TOLERANCE_SECONDS: '300',
      });
      expect(config.WEBHOOK_DEDUPE_SECONDS).to.equal(601);
    });

    it('accepts any window when no webhook uses Standard Webhooks (the tolerance does not apply)', () => {
      expect(
        loadReceiverConfig({ ...secrets, WEBHOOK_DEDUPE_SECONDS: '60' }).WEBHOOK_DEDUPE_SECONDS,
      ).to.equal(60);
    });
  });

  describe('with a standard-webhooks webhook', () => {
    const standard = {
      WEBHOOK_SECRETS: 'eu=topsecret,acme=topsecret',
      WEBHOOK_SIGNATURE_SCHEME: 'acme=standard-webhooks',
    };

    it('refuses a secret that is not whsec_ Base64, naming WEBHOOK_SECRETS and the entry, not the secret', () => {
      expect(() => loadReceiverConfig(standard))
        .to.throw(ConfigError)
        .with.property('message')
        .that.includes('WEBHOOK_SECRETS: entry 2 is not a Standard Webhooks secret')
        .and.does.not.include('topsecret');
    });

    it('refuses a header for it: its signature always comes in webhook-signature', () => {
      const key = `whsec_${Buffer.alloc(24, 3).toString('base64')}`;
      expect(() =>
        loadReceiverConfig({
          ...standard,
          WEBHOOK_SECRETS: `eu=s,acme=${key}`,
          WEBHOOK_SIGNATURE_HEADER: 'acme=x-sig',
        }),
      )
        .to.throw(ConfigError)
        .with.property('message')
        .that.includes('WEBHOOK_SIGNATURE_HEADER: webhook "acme" uses standard-webhooks');
    });

    it('refuses a header for every webhook when every webhook uses standard-webhooks: it would change nothing', () => {
      const key = `whsec_${Buffer.alloc(24, 3).toString('base64')}`;
      expect(() =>
        loadReceiverConfig({
          WEBHOOK_SECRETS: `acme=${key},billing=${key}`,
          WEBHOOK_SIGNATURE_SCHEME: 'standard-webhooks',
          WEBHOOK_SIGNATURE_HEADER: 'X-Sig',
        }),
      )
        .to.throw(ConfigError)
        .with.property('message')
        .that.includes(
          'WEBHOOK_SIGNATURE_HEADER: every webhook uses standard-webhooks, whose signature always comes in webhook-signature',
        )
        .and.does.not.include(key);
    });

    it('takes a header for every webhook while one of them uses the platform scheme (it applies to that one)', () => {
      const key = `whsec_${Buffer.alloc(24, 3).toString('base64')}`;
      const config = loadReceiverConfig({
        ...standard,
        WEBHOOK_SECRETS: `eu=s,acme=${key}`,
        WEBHOOK_SIGNATURE_HEADER: 'X-Sig',
      });
      expect(config.WEBHOOK_SECRETS.map((webhook) => webhook.name)).to.deep.equal(['eu', 'acme']);
    });
  });
});

describe('receiver METRICS_PORT', () => {
  it('refuses the port of the receiver itself, naming METRICS_PORT (it would bind first)', () => {
    expect(() => loadReceiverConfig({ ...secrets, RECEIVER_PORT: '8090', METRICS_PORT: '8090' }))
      .to.throw(ConfigError)
      .with.property('message')
      .that.contains('METRICS_PORT: must differ from RECEIVER_PORT (8090)');
    expect(loadReceiverConfig({ ...secrets, METRICS_PORT: '9464' }).METRICS_PORT).to.equal(9464);
  });
});
