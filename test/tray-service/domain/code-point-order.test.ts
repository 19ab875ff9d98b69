import { expect } from 'chai';
import fc from 'fast-check';
import { compareCodePoints } from '../../../tray-service/domain/code-point-order.ts';

describe('compareCodePoints', () => {
  it('puts a character above U+FFFF after one in U+E000-U+FFFF, as UTF-8 bytes do (code units do not)', () => {
    // "r😀" is r, 0xD83D 0xDE00; "r！" is r, 0xFF01: JavaScript's < has the emoji first.
    expect('r😀' < 'r！').to.equal(true);
    expect(compareCodePoints('r😀', 'r！')).to.be.above(0);
    expect(compareCodePoints('r！', 'r😀')).to.be.below(0);
  });

  it('orders every pair of strings as their UTF-8 bytes, and calls only equal strings equal', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
        const bytes = Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
        expect(Math.sign(compareCodePoints(a, b))).to.equal(bytes);
      }),
      { numRuns: 2_000 },
    );
  });

  it('orders strings sharing a prefix shorter first, and strings of ASCII as < does', () => {
    expect(compareCodePoints('ab', 'abc')).to.be.below(0);
    expect(compareCodePoints('abc', 'ab')).to.be.above(0);
    expect(compareCodePoints('b', 'ab')).to.be.above(0);
    expect(compareCodePoints('', '')).to.equal(0);
  });
});
