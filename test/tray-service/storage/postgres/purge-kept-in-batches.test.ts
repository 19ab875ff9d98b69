import { expect } from 'chai';
import pg from 'pg';
import { purgeKeptInBatches } from '../../../../tray-service/storage/postgres/purge-kept-in-batches.ts';
import { usePostgres } from '../../../support/use-postgres.ts';

describe('storage/postgres purgeKeptInBatches', () => {
  const postgres = usePostgres();
  let timed: pg.Pool | undefined;

  before(async () => {
    await postgres.pool.query('CREATE TABLE kept (id int PRIMARY KEY, expires_at bigint NOT NULL)');
    await postgres.pool.query('CREATE INDEX kept_expiry ON kept (expires_at)');
    // The service's pools run every statement under PG_STATEMENT_TIMEOUT_MS.
    timed = new pg.Pool({ connectionString: postgres.url, max: 1, statement_timeout: 400 });
    // The database's drop (usePostgres's after hook, before this suite's) ends its idle connection.
    timed.on('error', () => undefined);
  });
  after(async () => {
    await timed?.end();
  });
  beforeEach(async () => {
    await postgres.pool.query('DELETE FROM kept');
  });

  // Each row's keep check is a look-up of its own (a thread's kept actions for a tombstone, a
  // user's records for a mute span): a batch of rows whose checks are slow together outlasted the
  // statement timeout, and since the next run read the same oldest rows, that table was never
  // purged again. A batch that times out is tried again smaller, down to one row.
  it('goes on in smaller batches when a batch outlasts the statement timeout, and purges every row', async () => {
    await postgres.pool.query('INSERT INTO kept SELECT n, n FROM generate_series(1, 60) AS n');
    // 20 ms a row (correlated, so once per row): 60 rows take 1.2 s, 6 take 0.12 s.
    const slow = { table: 'kept', keptUntil: '(SELECT NULL::bigint FROM pg_sleep(0.02 + x.id * 0))' };
    if (!timed) throw new Error('no pool');
    expect(await purgeKeptInBatches(timed, slow, 1_000, 60)).to.equal(60);
    expect((await postgres.pool.query('SELECT count(*)::int AS n FROM kept')).rows[0]).to.deep.equal({
      n: 0,
    });
  });

  it('still fails when one row alone outlasts the statement timeout', async () => {
    await postgres.pool.query('INSERT INTO kept VALUES (1, 1)');
    const stuck = { table: 'kept', keptUntil: '(SELECT NULL::bigint FROM pg_sleep(1 + x.id * 0))' };
    if (!timed) throw new Error('no pool');
    await expect(purgeKeptInBatches(timed, stuck, 1_000, 60)).to.be.rejectedWith(/statement timeout/);
  });
});
