import { expect } from 'chai';
import { ConfigError } from '../../../shared/errors/config-error.ts';
import { loadTrayConfig } from '../../../shared/config/tray-config.ts';

describe('TRAY_CORS_ORIGINS (web origins allowed to call the tray API from a browser)', () => {
  const origins = (value?: string) =>
    loadTrayConfig(value === undefined ? {} : { TRAY_CORS_ORIGINS: value }).TRAY_CORS_ORIGINS;

  it('allows none when unset or empty', () => {
    expect(origins()).to.deep.equal([]);
    expect(origins(' ')).to.deep.equal([]);
  });

  it('takes a comma-separated list of origins as browsers send them, or * alone for any', () => {
    expect(origins('https://app.example.com, http://localhost:5173')).to.deep.equal([
      'https://app.example.com',
      'http://localhost:5173',
    ]);
    expect(origins('*')).to.equal('*');
  });

  for (const [value, message] of [
    ['app.example.com', /app\.example\.com is not an origin \(expected scheme:\/\/host\[:port\]/],
    ['https://app.example.com/', /write https:\/\/app\.example\.com$/],
    ['https://App.example.com', /write https:\/\/app\.example\.com$/],
    ['https://app.example.com:443', /write https:\/\/app\.example\.com$/],
    ['https://app.example.com/tray', /write https:\/\/app\.example\.com$/],
    ['ftp://files.example.com', /expected an http or https origin/],
    ['https://a.example.com,*', /\* stands alone/],
    // An origin interpolated while unset: the app it names would be refused with no word why.
    ['https://a.example.com,,https://b.example.com', /entry 2 is empty/],
    [' , ', /entry 1 is empty/],
  ] as const) {
    it(`refuses ${JSON.stringify(value)} at start-up, naming the variable and the entry`, () => {
      expect(() => origins(value))
        .to.throw(ConfigError)
        .with.property('message')
        .that.matches(/TRAY_CORS_ORIGINS: /)
        .and.matches(message);
    });
  }
});
