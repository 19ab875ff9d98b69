import { expect } from 'chai';
import { clientAddress } from '../../../receiver/address/client-address.ts';
import { parseTrustProxy } from '../../../receiver/address/parse-trust-proxy.ts';

const resolve = (socket: string, xff: string | undefined, trust: string) => {
  const result = clientAddress(socket, xff, parseTrustProxy(trust));
  return result.ok ? result.address.toString() : 'refused';
};

describe('clientAddress', () => {
  it('is the socket address without trusted proxies, whatever the header says', () => {
    expect(resolve('::ffff:10.0.0.1', '3.3.3.3', 'off')).to.equal('10.0.0.1');
  });

  it('ignores the header of a client that connects directly, from outside the trusted proxies', () => {
    expect(resolve('9.9.9.9', '52.77.130.167', '10.0.0.0/8,127.0.0.1')).to.equal('9.9.9.9');
    expect(resolve('::ffff:9.9.9.9', '52.77.130.167', 'loopback')).to.equal('9.9.9.9');
    expect(resolve('9.9.9.9', 'nonsense', 'loopback')).to.equal('9.9.9.9');
  });

  it('does not count an IPv4-compatible socket (::a.b.c.d) as the IPv4 proxy it spells', () => {
    expect(resolve('::10.0.0.1', '52.77.130.167', '10.0.0.0/8')).to.equal('::a00:1');
  });

  it('reads the header when the connection comes from a trusted proxy', () => {
    expect(resolve('10.1.2.3', '52.77.130.167', '10.0.0.0/8,127.0.0.1')).to.equal('52.77.130.167');
  });

  it('behind a CDN and a load balancer, skips both and stops at the client', () => {
    // client -> CDN edge (203.0.113.0/24) -> load balancer (10.0.0.0/8) -> receiver
    const trust = '203.0.113.0/24,10.0.0.0/8';
    expect(resolve('10.0.0.2', '52.77.130.167, 203.0.113.9', trust)).to.equal('52.77.130.167');
    expect(resolve('10.0.0.2', '3.3.3.3, 52.77.130.167, 203.0.113.9', trust)).to.equal('52.77.130.167');
  });

  it('with CIDRs, skips trusted hops and stops at the first untrusted one', () => {
    expect(resolve('127.0.0.1', '1.1.1.1, 2.2.2.2, 10.0.0.9', 'loopback,10.0.0.0/8')).to.equal('2.2.2.2');
    expect(resolve('9.9.9.9', '2.2.2.2', 'loopback')).to.equal('9.9.9.9');
  });

  it('refuses a malformed entry anywhere in the header', () => {
    expect(resolve('127.0.0.1', '010.1.1.1, 2.2.2.2', 'loopback')).to.equal('refused');
  });

  it('refuses an unknown socket address', () => {
    expect(clientAddress(undefined, undefined, { kind: 'none' }).ok).to.equal(false);
  });

  it('says why it refuses: an unknown socket, or a malformed forwarded address', () => {
    expect(clientAddress(undefined, '1.1.1.1', parseTrustProxy('loopback'))).to.deep.equal({
      ok: false,
      reason: 'socket address is unknown',
    });
    expect(clientAddress('127.0.0.1', 'nonsense', parseTrustProxy('loopback'))).to.deep.equal({
      ok: false,
      reason: 'X-Forwarded-For holds a malformed address',
    });
  });

  it('is the socket address when proxies are trusted but no header came', () => {
    expect(resolve('10.0.0.1', undefined, '10.0.0.0/8')).to.equal('10.0.0.1');
  });

  it('reads several X-Forwarded-For header lines as one list, in order', () => {
    const result = clientAddress(
      '10.0.0.1',
      ['1.1.1.1, 2.2.2.2', '3.3.3.3'],
      parseTrustProxy('10.0.0.0/8,3.3.3.3'),
    );
    expect(result.ok && result.address.toString()).to.equal('2.2.2.2');
  });

  it('with CIDRs trusting every hop, is the furthest hop the header names', () => {
    expect(resolve('10.0.0.1', '10.0.0.7, 10.0.0.5', '10.0.0.0/8')).to.equal('10.0.0.7');
  });
});
