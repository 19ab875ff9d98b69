import { expect } from 'chai';
import { jsonWithoutNul, withoutNul } from '../../../../tray-service/storage/postgres/without-nul.ts';

describe('storage/postgres withoutNul', () => {
  it('replaces every U+0000 with U+FFFD and leaves other text as it is', () => {
    expect(withoutNul('a\u0000b\u0000')).to.equal('a\uFFFDb\uFFFD');
    expect(withoutNul('plain \\u0000 text')).to.equal('plain \\u0000 text');
  });

  it('does the same in every string of a JSON value, keys included, keeping its shape', () => {
    expect(
      jsonWithoutNul({ 'k\u0000': ['x\u0000', 1, true, null, { deep: '\u0000' }], n: 2.5, empty: {} }),
    ).to.deep.equal({ 'k\uFFFD': ['x\uFFFD', 1, true, null, { deep: '\uFFFD' }], n: 2.5, empty: {} });
  });
});
