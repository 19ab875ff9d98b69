import { expect } from 'chai';
import { migrate } from '../../../../tray-service/storage/postgres/migrate.ts';
import { createPostgresBlockList } from '../../../../tray-service/storage/postgres/postgres-block-list.ts';
import { usePostgres } from '../../../support/use-postgres.ts';

describe('storage/postgres block list', () => {
  const postgres = usePostgres();
  const blockList = () => createPostgresBlockList(postgres.pool);
  before(async () => {
    await migrate(postgres.pool);
  });
  beforeEach(async () => {
    await postgres.pool.query('TRUNCATE block_list');
  });
  const entry = (blocked: string) => ({ netid_uid: 'n_owner', blocked_userId: blocked });

  it('keeps one entry when the same block arrives twice or concurrently', async () => {
    await blockList().block('n_owner', 'target');
    await Promise.all(Array.from({ length: 8 }, () => blockList().block('n_owner', 'target')));
    expect(await blockList().page('n_owner', undefined, 20)).to.deep.equal({
      results: [entry('target')],
      paginationToken: null,
    });
  });

  it('unblocks one entry, and unblocking what is not blocked changes nothing', async () => {
    await blockList().block('n_owner', 'a');
    await blockList().block('n_owner', 'b');
    await blockList().block('n_other', 'a');
    await blockList().unblock('n_owner', 'a');
    await blockList().unblock('n_owner', 'zzz');
    expect((await blockList().page('n_owner', undefined, 20)).results).to.deep.equal([entry('b')]);
    expect((await blockList().page('n_other', undefined, 20)).results).to.deep.equal([
      { netid_uid: 'n_other', blocked_userId: 'a' },
    ]);
  });

  it('pages in byte order of the blocked ids, the last page without a token', async () => {
    for (const id of ['b', 'B', 'a', '_x', 'é', 'C']) await blockList().block('n_owner', id);
    const first = await blockList().page('n_owner', undefined, 3);
    expect(first).to.deep.equal({
      results: [entry('B'), entry('C'), entry('_x')],
      paginationToken: entry('_x'),
    });
    const second = await blockList().page('n_owner', first.paginationToken?.blocked_userId, 3);
    expect(second).to.deep.equal({ results: [entry('a'), entry('b'), entry('é')], paginationToken: null });
  });

  it('ends on a full page without an empty page after it', async () => {
    for (const id of ['a', 'b']) await blockList().block('n_owner', id);
    expect(await blockList().page('n_owner', undefined, 2)).to.deep.equal({
      results: [entry('a'), entry('b')],
      paginationToken: null,
    });
    expect(await blockList().page('n_owner', 'b', 2)).to.deep.equal({ results: [], paginationToken: null });
  });

  it('tells which of a list of ids the owner has blocked, and only the owner', async () => {
    for (const id of ['a', 'b', 'c']) await blockList().block('n_owner', id);
    await blockList().block('n_other', 'd');
    expect(await blockList().blockedAmong('n_owner', ['c', 'd', 'a', 'a', 'x'])).to.deep.equal(
      new Set(['a', 'c']),
    );
    expect(await blockList().blockedAmong('n_owner', [])).to.deep.equal(new Set());
  });
});

describe('storage/postgres block list on a database whose default collation is not byte order', () => {
  // en-US sorts case-insensitively first ('a' < 'B'), unlike MongoDB and unlike the tests' clusters.
  const postgres = usePostgres({
    createWith: "TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'",
  });
  before(async () => {
    await migrate(postgres.pool);
  });

  it('still pages in byte order of the blocked ids', async () => {
    const blockList = createPostgresBlockList(postgres.pool);
    for (const id of ['b', 'B', 'a']) await blockList.block('n_owner', id);
    const first = await blockList.page('n_owner', undefined, 2);
    expect(first.results.map((entry) => entry.blocked_userId)).to.deep.equal(['B', 'a']);
    const second = await blockList.page('n_owner', 'a', 2);
    expect(second.results.map((entry) => entry.blocked_userId)).to.deep.equal(['b']);
  });
});
