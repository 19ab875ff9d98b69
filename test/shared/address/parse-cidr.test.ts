import { expect } from 'chai';
import { cidrContains, parseCidr, parseCidrList } from '../../../shared/address/parse-cidr.ts';
import { parseAddress } from '../../../shared/address/parse-address.ts';

const contains = (cidr: string, address: string) => cidrContains(parseCidr(cidr), parseAddress(address)!);

describe('parseCidr', () => {
  it('reads a single address as a /32 or /128', () => {
    expect(parseCidr('10.1.2.3').prefix).to.equal(32);
    expect(parseCidr('2001:db8::1').prefix).to.equal(128);
  });

  it('reads IPv4 and IPv6 ranges', () => {
    expect(contains('10.0.0.0/8', '10.200.1.1')).to.equal(true);
    expect(contains('10.0.0.0/8', '11.0.0.1')).to.equal(false);
    expect(contains('2001:db8::/32', '2001:db8:ffff::1')).to.equal(true);
    expect(contains('2001:db8::/32', '10.0.0.1')).to.equal(false);
  });

  it('reads an IPv4-mapped IPv6 range as the IPv4 range', () => {
    expect(parseCidr('::ffff:10.0.0.0/104')).to.satisfy(
      (cidr: ReturnType<typeof parseCidr>) => cidr.address.kind() === 'ipv4' && cidr.prefix === 8,
    );
  });

  it('reads an IPv4-compatible range (::a.b.c.d) as the IPv6 range it is', () => {
    const cidr = parseCidr('::10.0.0.0/104');
    expect(cidr.address.kind()).to.equal('ipv6');
    expect(cidr.prefix).to.equal(104);
    expect(contains('::10.0.0.0/104', '10.0.0.1')).to.equal(false);
    expect(contains('::10.0.0.0/104', '::10.0.0.1')).to.equal(true);
    expect(contains('10.0.0.0/8', '::10.0.0.1')).to.equal(false);
    expect(() => parseCidr('::10.0.0.0/8')).to.throw('host bits set');
  });

  it('refuses a range with host bits set, suggesting the network', () => {
    expect(() => parseCidr('10.0.0.1/8')).to.throw(
      '"10.0.0.1/8" has host bits set; did you mean 10.0.0.0/8?',
    );
  });

  for (const text of ['010.0.0.0/8', '10.0.0.0/33', '10.0.0.0/08', '10.0.0.0/', 'abc', '10.0.0.0/8/8']) {
    it(`refuses ${text}, naming it`, () => {
      expect(() => parseCidr(text)).to.throw(`"${text}"`);
    });
  }
});

describe('parseCidrList', () => {
  it('reads a comma-separated list, none when blank, and refuses an empty entry naming its place', () => {
    expect(parseCidrList(' 10.0.0.0/8, ::1 ')).to.have.lengthOf(2);
    expect(parseCidrList(' ')).to.deep.equal([]);
    expect(() => parseCidrList(' 10.0.0.0/8, ,::1 ')).to.throw('entry 2 is empty');
  });

  it('refuses an IPv4-mapped range shorter than the mapping prefix, naming the bounds a mapped range has', () => {
    for (const text of ['::ffff:10.0.0.0/8', '::ffff:10.0.0.0/90'])
      expect(() => parseCidr(text)).to.throw(`"${text}" has a prefix length outside 96-128`);
    expect(parseCidr('::ffff:10.0.0.0/104').prefix).to.equal(8);
    expect(() => parseCidr('10.0.0.0/33')).to.throw('"10.0.0.0/33" has a prefix length outside 0-32');
  });
});
