import { expect } from 'chai';
import { parseCidr } from '../../../shared/address/parse-cidr.ts';
import { firstTooWide } from '../../../shared/address/too-wide.ts';

const wideOf = (...entries: string[]) => firstTooWide(entries.map(parseCidr), 'trusts');

describe('firstTooWide: a range wider than one network is refused (shared/address/too-wide.ts)', () => {
  it('takes the widest ranges one deployment holds: 10.0.0.0/8, fc00::/7, a large public IPv6 holder’s /16', () => {
    expect(wideOf('10.0.0.0/8', 'fc00::/7', 'fd12:3456::/32', '2600:1f00::/24', '2a00::/16')).to.equal(
      undefined,
    );
  });

  it('refuses an IPv4 range wider than /8 and says so', () => {
    expect(wideOf('10.0.0.0/8', '0.0.0.0/1')?.reason).to.match(
      /wider than \/8 .*trusts a share of the internet/,
    );
  });

  // A public IPv6 /8 is a 256th of the global unicast space: no network holds one (the largest
  // allocations are /19 or so), so its trust is the internet's, as a public IPv4 /1 is.
  it('refuses a public IPv6 range wider than /16, though the private fc00::/7 is taken', () => {
    for (const entry of ['2000::/8', '2000::/12', '2a00::/15', 'fe80::/10', '::/7']) {
      const wide = wideOf(entry);
      expect(wide, entry).to.not.equal(undefined);
      expect(wide?.reason, entry).to.match(/IPv6: \/16, or \/7 inside fc00::\/7/);
    }
  });

  it('refuses any range wider than fc00::/7, private or not', () => {
    expect(wideOf('fc00::/6')).to.not.equal(undefined);
    expect(wideOf('::/0')?.reason).to.equal('trusts every address');
  });
});
