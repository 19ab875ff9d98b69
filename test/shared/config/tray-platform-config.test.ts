import { expect } from 'chai';
import { ConfigError } from '../../../shared/errors/config-error.ts';
import { loadTrayConfig } from '../../../shared/config/tray-config.ts';

describe('tray configuration: TRAY_PLATFORM_WEBHOOKS', () => {
  it('is unset by default (the platform is whoever signs with its scheme), also when empty', () => {
    expect(loadTrayConfig({}).TRAY_PLATFORM_WEBHOOKS).to.equal(undefined);
    expect(loadTrayConfig({ TRAY_PLATFORM_WEBHOOKS: ' ' }).TRAY_PLATFORM_WEBHOOKS).to.equal(undefined);
  });

  it('takes comma-separated webhook names as WEBHOOK_SECRETS writes them, each once', () => {
    expect(
      loadTrayConfig({ TRAY_PLATFORM_WEBHOOKS: 'eu, us,ap-south_1.b,eu' }).TRAY_PLATFORM_WEBHOOKS,
    ).to.deep.equal(['eu', 'us', 'ap-south_1.b']);
    expect(loadTrayConfig({ TRAY_PLATFORM_WEBHOOKS: 'default' }).TRAY_PLATFORM_WEBHOOKS).to.deep.equal([
      'default',
    ]);
  });

  const refused: [string, string][] = [
    ['eu,,us', 'entry 2 is empty'],
    ['eu,', 'entry 2 is empty'],
    ['eu;us', 'entry 1 is not a webhook name'],
    ['eu,u s', 'entry 2 is not a webhook name'],
    [`eu,${'x'.repeat(65)}`, 'entry 2 is not a webhook name'],
    // A secret pasted here would be logged at start-up as a webhook's name.
    ['eu,9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08', 'entry 2 looks like a secret'],
  ];
  for (const [value, message] of refused) {
    it(`refuses TRAY_PLATFORM_WEBHOOKS=${value.slice(0, 20)}, naming the variable and the entry`, () => {
      expect(() => loadTrayConfig({ TRAY_PLATFORM_WEBHOOKS: value }))
        .to.throw(ConfigError)
        .with.property('message')
        .that.includes(`TRAY_PLATFORM_WEBHOOKS: ${message}`);
    });
  }

  // WEBHOOK_SECRETS pasted here by mistake: the message must not carry a secret to a log.
  it('never repeats an entry it refuses', () => {
    expect(() => loadTrayConfig({ TRAY_PLATFORM_WEBHOOKS: 'eu=s3cret-value' }))
      .to.throw(ConfigError)
      .with.property('message')
      .that.includes('TRAY_PLATFORM_WEBHOOKS: entry 1 is not a webhook name')
      .and.not.include('s3cret');
  });
});
