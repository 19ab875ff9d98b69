import { expect } from 'chai';
import { parseAddress } from '../../../receiver/address/parse-address.ts';

describe('parseAddress', () => {
  for (const [text, expected] of [
    ['52.77.130.167', '52.77.130.167'],
    ['0.0.0.0', '0.0.0.0'],
    ['::1', '::1'],
    ['2001:db8::5', '2001:db8::5'],
    ['::ffff:52.77.130.167', '52.77.130.167'],
    ['::ffff:344d:82a7', '52.77.130.167'],
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
