import { expect } from 'chai';
import { listEntries } from '../../../shared/text/list-entries.ts';

describe('listEntries (a comma-separated list variable)', () => {
  it('reads the entries trimmed, and a blank value as none', () => {
    expect(listEntries(' a , b,c ')).to.deep.equal(['a', 'b', 'c']);
    for (const blank of ['', '  ']) expect(listEntries(blank)).to.deep.equal([]);
  });

  // `${PROXY_IP},loopback` with PROXY_IP unset: the proxy the operator meant would be left out.
  for (const [text, place] of [
    ['a,,b', 2],
    [',loopback', 1],
    ['a,b,', 3],
    [' , ', 1],
  ] as const) {
    it(`refuses ${JSON.stringify(text)}, naming entry ${place}`, () => {
      expect(() => listEntries(text)).to.throw(`entry ${place} is empty`);
    });
  }
});
