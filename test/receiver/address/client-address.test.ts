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

  it('with a hop count, skips exactly that many hops from the socket', () => {
    expect(resolve('10.0.0.1', '1.1.1.1, 2.2.2.2, 3.3.3.3', '2')).to.equal('2.2.2.2');
    expect(resolve('10.0.0.1', '3.3.3.3', '5')).to.equal('3.3.3.3');
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
});
