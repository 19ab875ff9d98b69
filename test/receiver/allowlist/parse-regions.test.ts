import { expect } from 'chai';
import { parseRegions } from '../../../receiver/allowlist/parse-regions.ts';

describe('parseRegions', () => {
  it('reads any subset in any case, with spaces, once each', () => {
    expect(parseRegions(' EU , sg, eu ')).to.deep.equal(['eu', 'sg']);
  });

  it('names an unknown entry and lists the valid regions', () => {
    expect(() => parseRegions('sg,mars')).to.throw(
      '"mars" is not a region; expected a comma-separated list of sg, eu, us',
    );
  });

  it('refuses a list that names no region', () => {
    expect(() => parseRegions('')).to.throw(/^expected a comma-separated list of sg, eu, us$/);
  });

  // Dropped, `${EXTRA_REGION},eu` with the variable unset started with `eu` alone: the region meant
  // was refused (403) with nothing said at start-up, as every other list names such an entry.
  it('names an empty entry: two commas in a row, a trailing comma, a variable left unset', () => {
    for (const [text, place] of [
      ['sg,,eu', 2],
      ['sg,', 2],
      [',eu', 1],
      [' , ', 1],
    ] as const)
      expect(() => parseRegions(text), text).to.throw(`entry ${place} is empty`);
  });
});
