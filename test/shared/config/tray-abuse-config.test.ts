import { expect } from 'chai';
import { loadTrayConfig } from '../../../shared/config/tray-config.ts';
import { parseTrustProxy } from '../../../receiver/address/parse-trust-proxy.ts';

describe('tray abuse configuration (TRUST_PROXY, AUTH_FAILURE_*, METRICS_*)', () => {
  it('defaults to no trusted proxy, 20 failures a minute, no metrics token or port', () => {
    const config = loadTrayConfig({});
    expect(config.TRUST_PROXY).to.deep.equal([]);
    expect(config).to.include({ AUTH_FAILURE_LIMIT: 20, AUTH_FAILURE_WINDOW_MS: 60_000 });
    expect(config.AUTH_FAILURE_EXEMPT).to.deep.equal([]);
    expect(config.METRICS_TOKEN).to.equal(undefined);
    expect(config.METRICS_PORT).to.equal(undefined);
  });

  it('reads off, false and 0 as no trusted proxy, as the receiver does (one env file for both)', () => {
    for (const value of ['off', 'false', '0', ' OFF '])
      expect(loadTrayConfig({ TRUST_PROXY: value }).TRUST_PROXY, value).to.deep.equal([]);
    for (const value of ['off', 'false', '0', ' OFF '])
      expect(parseTrustProxy(value), value).to.deep.equal({ kind: 'none' });
  });

  it('refuses a TRUST_PROXY or AUTH_FAILURE_EXEMPT entry left empty, naming the variable and the place', () => {
    expect(() => loadTrayConfig({ TRUST_PROXY: ',loopback' })).to.throw(/TRUST_PROXY: entry 1 is empty/);
    expect(() => loadTrayConfig({ AUTH_FAILURE_EXEMPT: '10.0.0.1,' })).to.throw(
      /AUTH_FAILURE_EXEMPT: entry 2 is empty/,
    );
  });

  it('reads proxy addresses, CIDRs and loopback', () => {
    expect(
      loadTrayConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,loopback,fd00::/8' }).TRUST_PROXY,
    ).to.deep.equal(['10.0.0.0/8', '127.0.0.1', 'loopback', 'fd00::/8']);
  });

  it('reads an IPv4-mapped range as the IPv4 range it maps, as the receiver does', () => {
    expect(loadTrayConfig({ TRUST_PROXY: '::ffff:10.0.0.0/104' }).TRUST_PROXY).to.deep.equal([
      '::ffff:10.0.0.0/104',
    ]);
  });

  it('reads the app back ends exempt from failed-authentication counting as addresses and CIDRs', () => {
    const exempt = loadTrayConfig({
      AUTH_FAILURE_EXEMPT: '10.1.2.3, 192.168.0.0/16,fd00::/8',
    }).AUTH_FAILURE_EXEMPT;
    expect(exempt.map((range) => `${range.address.toString()}/${range.prefix}`)).to.deep.equal([
      '10.1.2.3/32',
      '192.168.0.0/16',
      'fd00::/8',
    ]);
  });

  const bad: [Record<string, string>, RegExp][] = [
    [{ AUTH_FAILURE_EXEMPT: '0.0.0.0/0' }, /AUTH_FAILURE_EXEMPT: "0.0.0.0\/0" exempts every address/],
    // Two halves are every address as a /0 is; any range wider than one network's is refused.
    [
      { AUTH_FAILURE_EXEMPT: '0.0.0.0/1,128.0.0.0/1' },
      /AUTH_FAILURE_EXEMPT: "0.0.0.0\/1" is wider than \/8 \(IPv6: \/16, or \/7 inside fc00::\/7\) and exempts a share of the internet/,
    ],
    [{ AUTH_FAILURE_EXEMPT: '8000::/1' }, /AUTH_FAILURE_EXEMPT: "8000::\/1" is wider than/],
    [
      { AUTH_FAILURE_EXEMPT: 'backend.internal' },
      /AUTH_FAILURE_EXEMPT: "backend.internal" is not an IP address/,
    ],
    [{ AUTH_FAILURE_EXEMPT: '10.0.0.1/8' }, /AUTH_FAILURE_EXEMPT: "10.0.0.1\/8" has host bits set/],
    [{ TRUST_PROXY: '1' }, /TRUST_PROXY: "1" would trust X-Forwarded-For from any client/],
    [{ TRUST_PROXY: 'true' }, /TRUST_PROXY: "true" would trust/],
    [{ TRUST_PROXY: '0.0.0.0/0' }, /TRUST_PROXY: "0.0.0.0\/0" trusts every address/],
    [
      { TRUST_PROXY: '0.0.0.0/1, 128.0.0.0/1' },
      /TRUST_PROXY: "0.0.0.0\/1" is wider than \/8 \(IPv6: \/16, or \/7 inside fc00::\/7\) and trusts a share of the internet/,
    ],
    [{ ADMIN_TRUST_PROXY: '::/1,8000::/1' }, /ADMIN_TRUST_PROXY: "::\/1" is wider than/],
    [{ TRUST_PROXY: '::ffff:0.0.0.0/97' }, /TRUST_PROXY: "::ffff:0.0.0.0\/97" is wider than/],
    [{ TRUST_PROXY: 'proxy.internal' }, /TRUST_PROXY: "proxy.internal" is not an IP address or CIDR/],
    // IPv4-mapped: Express's proxy-addr reads it as 0.0.0.0/0, trusting every client's header.
    [{ TRUST_PROXY: '::ffff:0.0.0.0/96' }, /TRUST_PROXY: "::ffff:0.0.0.0\/96" trusts every address/],
    [{ TRUST_PROXY: '10.0.0.0/8,::FFFF:0:0/96' }, /TRUST_PROXY: "::ffff:0:0\/96" trusts every address/],
    [
      { ADMIN_TRUST_PROXY: '::ffff:0.0.0.0/96' },
      /ADMIN_TRUST_PROXY: "::ffff:0.0.0.0\/96" trusts every address/,
    ],
    [{ TRUST_PROXY: '010.0.0.1' }, /TRUST_PROXY: "010.0.0.1" is not an IP address or CIDR/],
    [{ AUTH_FAILURE_WINDOW_MS: '1500' }, /AUTH_FAILURE_WINDOW_MS: expected a whole number of seconds/],
    [{ AUTH_FAILURE_LIMIT: '0' }, /AUTH_FAILURE_LIMIT: expected a whole number/],
    [{ METRICS_TOKEN: 'short' }, /METRICS_TOKEN: expected at least 32 characters/],
    [
      { METRICS_TOKEN: 'correct horse battery staple 2024 metrics' },
      /METRICS_TOKEN: expected printable ASCII without spaces/,
    ],
    // A header carries bytes read as Latin-1: a non-ASCII token, sent as UTF-8, never matched.
    [{ METRICS_TOKEN: `${'m'.repeat(32)}é` }, /METRICS_TOKEN: expected printable ASCII without spaces/],
    [{ METRICS_PORT: '70000' }, /METRICS_PORT: expected a TCP port number/],
  ];
  for (const [env, message] of bad) {
    it(`refuses ${Object.entries(env)[0]!.join('=')}, naming the variable`, () => {
      expect(() => loadTrayConfig(env)).to.throw(message);
    });
  }
});
