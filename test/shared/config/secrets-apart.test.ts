import { expect } from 'chai';
import { loadTrayConfig } from '../../../shared/config/tray-config.ts';
import { ConfigError } from '../../../shared/errors/config-error.ts';

const secret = (name: string) => `${name}-${'x'.repeat(40)}`;

// Each of these secrets goes to a different party. One value given for two (an operator pasting
// the same generated string) let the party verifying moderation decisions mint any user's token,
// and a scraper's config open the admin API.
describe('checkSecretsApart (the tray refuses one secret reused for another)', () => {
  it('starts with every secret different', () => {
    expect(() =>
      loadTrayConfig({
        JWT_SECRET: secret('jwt'),
        ADMIN_TOKEN: secret('admin'),
        METRICS_TOKEN: secret('metrics'),
        MODERATION_WEBHOOK_URL: 'https://moderation.example/decisions',
        MODERATION_WEBHOOK_SECRET: secret('moderation'),
      }),
    ).not.to.throw();
  });

  for (const [later, earlier] of [
    ['MODERATION_WEBHOOK_SECRET', 'JWT_SECRET'],
    ['METRICS_TOKEN', 'ADMIN_TOKEN'],
    ['METRICS_TOKEN', 'JWT_SECRET'],
    ['MODERATION_WEBHOOK_SECRET', 'ADMIN_TOKEN'],
  ] as const) {
    it(`refuses ${later} equal to ${earlier}, naming ${later} and not the value`, () => {
      const same = secret('same');
      const env: Record<string, string> = {
        JWT_SECRET: secret('jwt'),
        ADMIN_TOKEN: secret('admin'),
        MODERATION_WEBHOOK_URL: 'https://moderation.example/decisions',
        MODERATION_WEBHOOK_SECRET: secret('moderation'),
        [earlier]: same,
        [later]: same,
      };
      expect(() => loadTrayConfig(env))
        .to.throw(ConfigError, `${later}: must differ from ${earlier}`)
        .with.property('message')
        .that.does.not.include(same);
    });
  }
});
