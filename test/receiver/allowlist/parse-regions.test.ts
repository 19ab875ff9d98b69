import { expect } from 'chai';
import { parseRegions } from '../../../receiver/allowlist/parse-regions.ts';

describe('parseRegions', () => {
  it('reads any subset in any case, with spaces and empty entries, once each', () => {
    expect(parseRegions(' EU , sg,,eu ')).to.deep.equal(['eu', 'sg']);
  });

  it('names an unknown entry and lists the valid regions', () => {
    expect(() => parseRegions('sg,mars')).to.throw(
      '"mars" is not a region; expected a comma-separated list of sg, eu, us',
    );
  });

  it('refuses a list that names no region', () => {
    for (const text of ['', ' , ']) {
      expect(() => parseRegions(text), JSON.stringify(text)).to.throw(
        /^expected a comma-separated list of sg, eu, us$/,
      );
    }
  });
});
