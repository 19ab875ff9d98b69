import { expect } from 'chai';
import { ConfigError } from '../../../shared/errors/config-error.ts';
import { loadTrayConfig } from '../../../shared/config/tray-config.ts';

describe('tray worker configuration: the snooze wake-up', () => {
  it('wakes ended snoozes every 250 ms unless told otherwise', () => {
    expect(loadTrayConfig({}).TRAY_WAKE_INTERVAL_MS).to.equal(250);
    expect(loadTrayConfig({ TRAY_WAKE_INTERVAL_MS: '100' }).TRAY_WAKE_INTERVAL_MS).to.equal(100);
    expect(loadTrayConfig({ TRAY_WAKE_INTERVAL_MS: '50' }).TRAY_WAKE_INTERVAL_MS).to.equal(50);
  });

  it('takes up to 750 ms, which leaves the round a quarter of the second a snooze has to come back in', () => {
    expect(loadTrayConfig({ TRAY_WAKE_INTERVAL_MS: '750' }).TRAY_WAKE_INTERVAL_MS).to.equal(750);
  });

  // 751: a longer pause would break the promise of a snooze back on its streams within 1 s; 49: a
  // query of every process hundreds of times a second, for nothing a user sees.
  for (const value of ['0', '1', '49', 'often', '751', '60000']) {
    it(`refuses TRAY_WAKE_INTERVAL_MS=${value}, naming the variable and why`, () => {
      expect(() => loadTrayConfig({ TRAY_WAKE_INTERVAL_MS: value }))
        .to.throw(ConfigError)
        .with.property('message')
        .that.includes(
          'TRAY_WAKE_INTERVAL_MS: expected a whole number from 50 to 750 (a snooze is back on its streams within 1 s of its end; each round is a query of every tray process)',
        );
    });
  }
});
