import { expect } from 'chai';
import { createMemoryFailedAuthLimit } from '../../../shared/http/memory-failed-auth-limit.ts';

describe('createMemoryFailedAuthLimit (failed authentications per address, in memory)', () => {
  let clock = 1_000_000;
  const limitOf = (maxAddresses = 100) =>
    createMemoryFailedAuthLimit({ points: 3, windowMs: 60_000, maxAddresses, now: () => clock });
  beforeEach(() => {
    clock = 1_000_000;
  });

  it('refuses an address for a whole window after `points` failures, and no other address', async () => {
    const limit = limitOf();
    for (let i = 0; i < 3; i += 1) expect(await limit.failed('198.51.100.7')).to.equal(0);
    expect(limit.blockedFor('198.51.100.7')).to.equal(0);
    clock += 10_000;
    expect(await limit.failed('198.51.100.7')).to.equal(60_000);
    expect(limit.blockedFor('198.51.100.7')).to.equal(60_000);
    expect(limit.blockedFor('198.51.100.8')).to.equal(0);
    clock += 59_999;
    expect(limit.blockedFor('198.51.100.7')).to.equal(1);
    clock += 1;
    expect(limit.blockedFor('198.51.100.7')).to.equal(0);
    expect(limit.addresses).to.equal(0);
  });

  it('starts a new window once the last one is over: failures spread out never refuse', async () => {
    const limit = limitOf();
    for (let i = 0; i < 10; i += 1) {
      for (let j = 0; j < 3; j += 1) expect(await limit.failed('198.51.100.7')).to.equal(0);
      clock += 60_000;
    }
  });

  it('counts an IPv6 address by its /64, and an IPv4-mapped one as the IPv4 address', async () => {
    const limit = limitOf();
    for (let i = 0; i < 4; i += 1) await limit.failed(`2001:db8:1:2::${i + 1}`);
    expect(limit.blockedFor('2001:db8:1:2:ffff::9')).to.be.above(0);
    expect(limit.blockedFor('2001:db8:1:3::1')).to.equal(0);
    for (let i = 0; i < 4; i += 1) await limit.failed('::ffff:203.0.113.5');
    expect(limit.blockedFor('203.0.113.5')).to.be.above(0);
  });

  it('remembers at most maxAddresses, dropping the oldest first, whatever the number of addresses', async () => {
    const limit = limitOf(50);
    for (let i = 0; i < 4; i += 1) await limit.failed('198.51.100.7');
    expect(limit.blockedFor('198.51.100.7')).to.be.above(0);
    for (let i = 0; i < 49; i += 1) await limit.failed(`203.0.113.${i}`);
    expect(limit.addresses).to.equal(50);
    expect(limit.blockedFor('198.51.100.7')).to.be.above(0);
    for (let i = 0; i < 5_000; i += 1) await limit.failed(`10.${i >> 8}.${i & 255}.1`);
    expect(limit.addresses).to.equal(50);
    expect(limit.blockedFor('198.51.100.7')).to.equal(0);
  });

  it('lets counts whose window is over go as new addresses come', async () => {
    const limit = limitOf();
    for (let i = 0; i < 20; i += 1) await limit.failed(`203.0.113.${i}`);
    expect(limit.addresses).to.equal(20);
    clock += 60_000;
    await limit.failed('198.51.100.7');
    expect(limit.addresses).to.equal(1);
  });
});
