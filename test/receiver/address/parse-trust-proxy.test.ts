import { expect } from 'chai';
import { parseTrustProxy } from '../../../receiver/address/parse-trust-proxy.ts';

describe('parseTrustProxy', () => {
  it('reads off, 0 and empty as no trusted proxy', () => {
    for (const text of ['', 'off', '0']) expect(parseTrustProxy(text)).to.deep.equal({ kind: 'none' });
  });

  it('refuses a hop count: it would trust the header from a client connecting directly', () => {
    expect(() => parseTrustProxy('2')).to.throw(/"2": a hop count trusts X-Forwarded-For from any client/);
  });

  // `${PROXY_IP},loopback` with PROXY_IP unset: the proxy would not be trusted, and every client
  // behind it would share its address (one rate limit, one allowlist answer) with no word why.
  it('refuses an empty entry, naming its place', () => {
    expect(() => parseTrustProxy(',loopback')).to.throw('entry 1 is empty');
    expect(() => parseTrustProxy('10.0.0.0/8,,loopback')).to.throw('entry 2 is empty');
  });

  it('reads loopback and CIDR lists', () => {
    const trust = parseTrustProxy('loopback, 10.0.0.0/8');
    expect(trust.kind).to.equal('cidrs');
    expect(trust.kind === 'cidrs' && trust.cidrs).to.have.lengthOf(3);
  });

  for (const text of ['true', 'all', '*', '0.0.0.0/0', '::/0']) {
    it(`refuses "${text}" (trusting everything)`, () => {
      expect(() => parseTrustProxy(text)).to.throw(/every/);
    });
  }

  // The advice of a refusal must itself be a value that is taken.
  it('refuses "true" recommending only values it takes (loopback or CIDRs, never a hop count)', () => {
    let message = '';
    try {
      parseTrustProxy('true');
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).to.include('"loopback"');
    expect(message).not.to.match(/hop count/);
  });

  it('refuses a malformed proxy address, naming it', () => {
    expect(() => parseTrustProxy('10.0.0.01')).to.throw('"10.0.0.01"');
  });

  it('reads "false" in any case, and surrounding spaces, as no trusted proxy', () => {
    for (const text of ['false', 'FALSE', ' off ', ' 0 ']) {
      expect(parseTrustProxy(text), text).to.deep.equal({ kind: 'none' });
    }
  });

  it('refuses every hop count, naming the value and what to give instead', () => {
    for (const text of [' 1 ', '10', '11']) {
      expect(() => parseTrustProxy(text), text).to.throw(/give the proxies' addresses or CIDRs/);
    }
  });

  it('reads loopback anywhere in a list with spaces', () => {
    const trust = parseTrustProxy('10.0.0.0/8, loopback');
    expect(
      trust.kind === 'cidrs' && trust.cidrs.map((cidr) => `${cidr.address.toString()}/${cidr.prefix}`),
    ).to.deep.equal(['10.0.0.0/8', '127.0.0.0/8', '::1/128']);
  });

  it('refuses a list in which any one range is /0', () => {
    expect(() => parseTrustProxy('10.0.0.0/8, 0.0.0.0/0')).to.throw(/every address/);
  });

  // Together they are every address, as a /0 is.
  it('refuses a range wider than one network (/8; IPv6 /16, or /7 inside fc00::/7), and takes the widest private ones', () => {
    expect(() => parseTrustProxy('0.0.0.0/1, 128.0.0.0/1')).to.throw(/"0.0.0.0\/1" is wider than \/8/);
    expect(() => parseTrustProxy('::/1')).to.throw(/"::\/1" is wider than/);
    const trust = parseTrustProxy('10.0.0.0/8, fc00::/7');
    expect(trust.kind === 'cidrs' && trust.cidrs).to.have.lengthOf(2);
  });
});
