import { expect } from 'chai';
import { withoutNul } from '../../../../tray-service/storage/postgres/without-nul.ts';

describe('storage/postgres withoutNul', () => {
  it('replaces every U+0000 with U+FFFD and leaves other text as it is', () => {
    expect(withoutNul('a\u0000b\u0000')).to.equal('a\uFFFDb\uFFFD');
    expect(withoutNul('plain \\u0000 text')).to.equal('plain \\u0000 text');
  });
});
