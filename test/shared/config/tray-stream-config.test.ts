import { expect } from 'chai';
import { ConfigError } from '../../../shared/errors/config-error.ts';
import { loadTrayConfig } from '../../../shared/config/tray-config.ts';

describe('live tray configuration', () => {
  it('defaults to 5 streams per user, 20,000 per instance, the tray-live prefix and no demo page', () => {
    expect(loadTrayConfig({})).to.include({
      STREAMS_PER_USER: 5,
      STREAMS_PER_INSTANCE: 20_000,
      STREAM_REDIS_PREFIX: 'tray-live',
      TRAY_DEMO: 'off',
    });
  });

  it('turns the demo page on', () => {
    expect(loadTrayConfig({ TRAY_DEMO: 'on' }).TRAY_DEMO).to.equal('on');
  });

  for (const [variable, value, message] of [
    ['STREAMS_PER_USER', '0', 'STREAMS_PER_USER: expected a whole number from 1 to 100'],
    ['STREAMS_PER_USER', 'five', 'STREAMS_PER_USER: expected a whole number from 1 to 100'],
    ['STREAMS_PER_INSTANCE', '100001', 'STREAMS_PER_INSTANCE: expected a whole number from 1 to 100000'],
    ['STREAMS_PER_INSTANCE', '0', 'STREAMS_PER_INSTANCE: expected a whole number from 1 to 100000'],
    ['TRAY_DEMO', 'yes', 'TRAY_DEMO: expected "on" or "off"'],
    ['STREAM_REDIS_PREFIX', 'live:*', 'STREAM_REDIS_PREFIX: expected 1-63 letters'],
  ] as const) {
    it(`refuses ${variable}=${value}, naming the variable`, () => {
      expect(() => loadTrayConfig({ [variable]: value }))
        .to.throw(ConfigError)
        .with.property('message')
        .that.includes(message);
    });
  }
});
