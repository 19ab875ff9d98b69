import { expect } from 'chai';
import { ConfigError } from '../../../shared/errors/config-error.ts';
import { loadTrayConfig } from '../../../shared/config/tray-config.ts';

describe('tray messages configuration', () => {
  it('defaults DEFAULT_LOCALE to en and TRAY_MESSAGES_DIR to none', () => {
    const config = loadTrayConfig({});
    expect(config.DEFAULT_LOCALE).to.equal('en');
    expect(config.TRAY_MESSAGES_DIR).to.equal(undefined);
  });

  it('stores DEFAULT_LOCALE in canonical case, as catalogue files are named', () => {
    expect(loadTrayConfig({ DEFAULT_LOCALE: 'pt-br' }).DEFAULT_LOCALE).to.equal('pt-BR');
  });

  it('rejects a DEFAULT_LOCALE that is not a BCP 47 tag, naming the variable', () => {
    expect(() => loadTrayConfig({ DEFAULT_LOCALE: 'english please' }))
      .to.throw(ConfigError)
      .with.property(
        'message',
        'Invalid configuration: DEFAULT_LOCALE: expected a BCP 47 locale such as en, fr or pt-BR',
      );
  });
});
