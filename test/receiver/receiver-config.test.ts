import { expect } from 'chai';
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
        SPOOL_DIR: '.data/receiver-spool',
      });
      expect(config.WEBHOOK_SECRETS.map((secret) => [secret.name, secret.keys.length])).to.deep.equal([
        ['eu', 2],
        ['us', 1],
      ]);
    });
  });

  for (const [variable, value, message] of [
    ['WEBHOOK_REGIONS', 'eu,ap', '"ap" is not a region'],
    ['WEBHOOK_ALLOW_CIDRS', '10.0.0.0/8, 2130706433', '"2130706433" is not an IP address'],
    ['TRUST_PROXY', '0.0.0.0/0', 'a /0 range trusts every address'],
    ['TRUST_PROXY', '1', '"1": a hop count trusts X-Forwarded-For from any client'],
    ['WEBHOOK_ENQUEUE_TIMEOUT_MS', '5000', 'expected a whole number from 1 to 1000'],
    ['WEBHOOK_PATH', 'webhooks', 'expected a path starting with "/"'],
    ['WEBHOOK_SECRETS', 'eu=topsecret,,us=x', 'entry 2 is empty'],
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
});
