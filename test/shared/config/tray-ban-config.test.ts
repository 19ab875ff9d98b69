import { expect } from 'chai';
import { ConfigError } from '../../../shared/errors/config-error.ts';
import { loadTrayConfig } from '../../../shared/config/tray-config.ts';

describe('global ban configuration', () => {
  it('defaults to the tray-bans prefix and a 500 ms refresh', () => {
    expect(loadTrayConfig({})).to.include({ BAN_REDIS_PREFIX: 'tray-bans', BAN_REFRESH_MS: 500 });
  });

  it('refuses a refresh longer than 1500 ms, naming the variable', () => {
    expect(() => loadTrayConfig({ BAN_REFRESH_MS: '5000' }))
      .to.throw(ConfigError)
      .with.property('message')
      .that.includes('BAN_REFRESH_MS: expected a whole number from 100 to 1500');
  });

  it('refuses a prefix with characters unsafe in a key, naming the variable', () => {
    expect(() => loadTrayConfig({ BAN_REDIS_PREFIX: 'bans:*' }))
      .to.throw(ConfigError)
      .with.property('message')
      .that.includes('BAN_REDIS_PREFIX: expected 1-63 letters');
  });
});
