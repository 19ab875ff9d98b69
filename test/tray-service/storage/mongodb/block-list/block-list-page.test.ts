import { expect } from 'chai';
import {
  blockFetchLimit,
  cutBlockPage,
} from '../../../../../tray-service/storage/mongodb/block-list/block-list-page.ts';
import type { BlockEntry } from '../../../../../tray-service/storage/port.ts';

const entries = (count: number): BlockEntry[] =>
  Array.from({ length: count }, (_, n) => ({ netid_uid: 'net1_u-ana', blocked_userId: `b${n}` }));

describe('block-list paging', () => {
  it('fetches one row more than a page', () => {
    expect(blockFetchLimit(20)).to.equal(21);
  });

  it('hands out the page and its last entry as the cursor when a row follows', () => {
    const page = cutBlockPage(entries(4), 3);
    expect(page.results).to.deep.equal(entries(3));
    expect(page.paginationToken).to.deep.equal({ netid_uid: 'net1_u-ana', blocked_userId: 'b2' });
  });

  it('ends with a null cursor when the rows fill the page exactly', () => {
    expect(cutBlockPage(entries(3), 3)).to.deep.equal({ results: entries(3), paginationToken: null });
  });

  it('ends with a null cursor on a short page and on an empty list', () => {
    expect(cutBlockPage(entries(2), 3)).to.deep.equal({ results: entries(2), paginationToken: null });
    expect(cutBlockPage([], 3)).to.deep.equal({ results: [], paginationToken: null });
  });

  it('copies only the two cursor fields from the stored row', () => {
    const rows = entries(2).map((row) => ({ ...row, createdAt: new Date(0) }));
    expect(cutBlockPage(rows, 1).paginationToken).to.have.all.keys('netid_uid', 'blocked_userId');
  });
});
