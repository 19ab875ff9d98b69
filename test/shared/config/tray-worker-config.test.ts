import { expect } from 'chai';
import { ConfigError } from '../../../shared/errors/config-error.ts';
import { loadTrayConfig } from '../../../shared/config/tray-config.ts';

describe('tray worker configuration: the snooze wake-up', () => {
  it('wakes ended snoozes every 250 ms unless told otherwise', () => {
    expect(loadTrayConfig({}).TRAY_WAKE_INTERVAL_MS).to.equal(250);
    expect(loadTrayConfig({ TRAY_WAKE_INTERVAL_MS: '100' }).TRAY_WAKE_INTERVAL_MS).to.equal(100);
  });

  for (const value of ['0', 'often', '60001']) {
    it(`refuses TRAY_WAKE_INTERVAL_MS=${value}, naming the variable`, () => {
      expect(() => loadTrayConfig({ TRAY_WAKE_INTERVAL_MS: value }))
        .to.throw(ConfigError)
        .with.property('message')
        .that.includes('TRAY_WAKE_INTERVAL_MS: expected a whole number from 1 to 60000');
    });
  }
});
