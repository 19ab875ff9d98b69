import { expect } from 'chai';
import { cutPage, startAfterRange } from '../../../tray-service/store/timestamp-page.ts';

const row = (_id: string, lastUpdate: number) => ({ _id, lastUpdate });

describe('cutPage', () => {
  it('ends the walk (nextPage 0) when no row follows the page', () => {
    expect(cutPage([row('b', 5), row('a', 4)], 2)).to.deep.equal({
      kind: 'complete',
      records: [row('b', 5), row('a', 4)],
      nextPage: 0,
    });
  });

  it('points at the last timestamp when the next row is older', () => {
    expect(cutPage([row('c', 6), row('b', 5), row('a', 4)], 2)).to.deep.include({
      kind: 'complete',
      nextPage: 5,
    });
  });

  it('asks for the rest of the group when the next row shares the last timestamp', () => {
    expect(cutPage([row('c', 6), row('b', 5), row('a', 5)], 2)).to.deep.equal({
      kind: 'extend',
      records: [row('c', 6), row('b', 5)],
      boundary: 5,
      afterId: 'b',
    });
  });
});

describe('startAfterRange', () => {
  it('reads absent and 1 as the first page, 0 as past the end, else a strict upper bound', () => {
    expect(startAfterRange(undefined)).to.equal('all');
    expect(startAfterRange(1)).to.equal('all');
    expect(startAfterRange(0)).to.equal('empty');
    expect(startAfterRange(1_700_000_000_000)).to.deep.equal({ $lt: 1_700_000_000_000 });
  });
});
