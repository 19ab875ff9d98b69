import { expect } from 'chai';
import {
  cutPage,
  pageFetchLimit,
  startAfterRange,
} from '../../../../../tray-service/storage/mongodb/records/timestamp-page.ts';

const row = (_id: string, lastUpdate: number) => ({ _id, lastUpdate });

describe('cutPage', () => {
  it('fetches the page and as many again, plus one', () => {
    expect(pageFetchLimit(10)).to.equal(21);
  });

  it('ends the walk (nextPage 0) when no row follows the page', () => {
    expect(cutPage([row('b', 5), row('a', 4)], 2, 5)).to.deep.equal({
      kind: 'complete',
      records: [row('b', 5), row('a', 4)],
      nextPage: 0,
    });
  });

  it('points at the last timestamp when the next row is older', () => {
    expect(cutPage([row('c', 6), row('b', 5), row('a', 4)], 2, 5)).to.deep.include({
      kind: 'complete',
      nextPage: 5,
    });
  });

  it('extends the page over the rest of a group of equal timestamps', () => {
    expect(cutPage([row('d', 6), row('c', 5), row('b', 5), row('a', 4)], 2, 5)).to.deep.equal({
      kind: 'complete',
      records: [row('d', 6), row('c', 5), row('b', 5)],
      nextPage: 5,
    });
  });

  it('ends the walk when the group runs to the last row and fewer rows than the limit came back', () => {
    expect(cutPage([row('c', 6), row('b', 5), row('a', 5)], 2, 5)).to.deep.include({
      kind: 'complete',
      nextPage: 0,
    });
  });

  it('asks for the rest of the group when every fetched row after the page shares its last timestamp', () => {
    expect(cutPage([row('e', 6), row('d', 5), row('c', 5), row('b', 5), row('a', 5)], 2, 5)).to.deep.equal({
      kind: 'extend',
      records: [row('e', 6), row('d', 5), row('c', 5), row('b', 5), row('a', 5)],
      boundary: 5,
      afterId: 'a',
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

  it('ends the walk with a page shorter than the page size', () => {
    const rows = [
      { _id: 'b', lastUpdate: 20 },
      { _id: 'a', lastUpdate: 10 },
    ];
    expect(cutPage(rows, 3, pageFetchLimit(3))).to.deep.equal({
      kind: 'complete',
      records: rows,
      nextPage: 0,
    });
  });

  it('refuses a page size of 0 with its own message', () => {
    expect(() => cutPage([{ _id: 'a', lastUpdate: 1 }], 0, 1)).to.throw(
      'cutPage: pageSize must be at least 1',
    );
  });
});
