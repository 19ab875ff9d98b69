import { expect } from 'chai';
import { parseAddress } from '../../../shared/address/parse-address.ts';
import { parseCidrList } from '../../../shared/address/parse-cidr.ts';
import { createAllowlist } from '../../../receiver/allowlist/create-allowlist.ts';
import { isAllowed } from '../../../receiver/allowlist/is-allowed.ts';
import { parseRegions } from '../../../receiver/allowlist/parse-regions.ts';
import { regionalAddresses } from '../../../receiver/allowlist/regional-addresses.ts';

describe('allowlist', () => {
  it('holds the four addresses of each region from docs/contract.md#source-addresses', () => {
    expect(regionalAddresses.sg).to.have.lengthOf(4);
    expect(regionalAddresses.eu).to.include('3.127.106.141');
    expect(regionalAddresses.us).to.include('100.24.154.219');
  });

  it('allows only the chosen regions plus the extra CIDRs', () => {
    const allowlist = createAllowlist(parseRegions('eu'), parseCidrList('192.0.2.0/24'));
    const allowed = (text: string) => isAllowed(allowlist, parseAddress(text)!);
    expect(allowed('3.65.52.7')).to.equal(true);
    expect(allowed('192.0.2.77')).to.equal(true);
    expect(allowed('52.77.130.167')).to.equal(false);
    expect(allowed('::ffff:3.65.52.7')).to.equal(true);
    // IPv4-compatible, not IPv4-mapped: another (IPv6) address than the region's.
    expect(allowed('::3.65.52.7')).to.equal(false);
  });

  it('refuses an unknown region, naming it', () => {
    expect(() => parseRegions('eu,mars')).to.throw('"mars" is not a region');
  });
});
