import { expect } from 'chai';
import { parseAddress } from '../../../shared/address/parse-address.ts';

describe('parseAddress', () => {
  for (const [text, expected] of [
    ['52.77.130.167', '52.77.130.167'],
    ['0.0.0.0', '0.0.0.0'],
    ['::1', '::1'],
    ['2001:db8::5', '2001:db8::5'],
    ['::ffff:52.77.130.167', '52.77.130.167'],
    ['::ffff:344d:82a7', '52.77.130.167'],
    // IPv4-compatible (::a.b.c.d, deprecated) is an IPv6 address like any other, written in hex or
    // with a dotted quad: only ::ffff:0:0/96 carries an IPv4 address.
    ['::52.77.130.167', '::344d:82a7'],
    ['::344d:82a7', '::344d:82a7'],
    ['::10.0.0.1', '::a00:1'],
    ['64:ff9b::52.77.130.167', '64:ff9b::344d:82a7'],
    ['1:2:3:4:5:6:10.0.0.1', '1:2:3:4:5:6:a00:1'],
    ['::ffff:0.0.0.0', '0.0.0.0'],
  ] as const) {
    it(`reads ${text} as ${expected}`, () => {
      expect(parseAddress(text)?.toString()).to.equal(expected);
    });
  }

  for (const text of [
    '010.0.0.1',
    '2130706433',
    '0x7f.0.0.1',
    '127.1',
    '1.2.3.4 ',
    '1.2.3.256',
    '1.2.3.4:80',
    '[::1]',
    'fe80::1%eth0',
    '::ffff:010.0.0.1',
    '',
    'localhost',
  ]) {
    it(`refuses ${JSON.stringify(text)}`, () => {
      expect(parseAddress(text)).to.equal(undefined);
    });
  }
});
