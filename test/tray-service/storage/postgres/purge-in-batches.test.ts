import { expect } from 'chai';
import pg from 'pg';
import { purgeInBatches } from '../../../../tray-service/storage/postgres/purge-in-batches.ts';
import { usePostgres } from '../../../support/use-postgres.ts';
import { aroundQueries } from './around-queries.ts';

describe('storage/postgres purgeInBatches', () => {
  const postgres = usePostgres();
  let timed: pg.Pool | undefined;

  before(async () => {
    await postgres.pool.query('CREATE TABLE expiring (id int PRIMARY KEY, expires_at bigint NOT NULL)');
    await postgres.pool.query('CREATE INDEX expiring_expiry ON expiring (expires_at)');
    // 20 ms a deleted row, as freeing a large event's payload can take: 60 rows take 1.2 s, 6 take
    // 0.12 s.
    await postgres.pool.query(`CREATE FUNCTION slow_delete() RETURNS trigger LANGUAGE plpgsql AS
      $$ BEGIN PERFORM pg_sleep(CASE WHEN OLD.id = 0 THEN 1 ELSE 0.02 END); RETURN OLD; END $$`);
    await postgres.pool.query(
      'CREATE TRIGGER expiring_slow BEFORE DELETE ON expiring FOR EACH ROW EXECUTE FUNCTION slow_delete()',
    );
    // The service's pools run every statement under PG_STATEMENT_TIMEOUT_MS.
    timed = new pg.Pool({ connectionString: postgres.url, max: 1, statement_timeout: 400 });
    // The database's drop (usePostgres's after hook, before this suite's) ends its idle connection.
    timed.on('error', () => undefined);
  });
  after(async () => {
    await timed?.end();
  });
  beforeEach(async () => {
    await postgres.pool.query('ALTER TABLE expiring DISABLE TRIGGER expiring_slow');
    await postgres.pool.query('DELETE FROM expiring');
    await postgres.pool.query('ALTER TABLE expiring ENABLE TRIGGER expiring_slow');
  });

  // A batch of 1,000 events deletes their payloads too (up to WEBHOOK_MAX_BODY_BYTES each): one that
  // outlasted the statement timeout failed every later purge at the same oldest rows, and expired
  // events were never deleted again. A batch that times out is tried again smaller.
  it('goes on in smaller batches when a batch outlasts the statement timeout, and deletes every expired row', async () => {
    await postgres.pool.query('INSERT INTO expiring SELECT n, n FROM generate_series(1, 60) AS n');
    await postgres.pool.query('INSERT INTO expiring VALUES (1000, 1000)');
    if (!timed) throw new Error('no pool');
    expect(await purgeInBatches(timed, { table: 'expiring', key: 'id' }, 60, 60)).to.equal(60);
    expect((await postgres.pool.query('SELECT id FROM expiring')).rows).to.deep.equal([{ id: 1000 }]);
  });

  // A few slow rows first (the oldest events, large payloads), then a backlog of ordinary ones (a
  // retention cut, days of downtime): the batches shrank for the slow rows and stayed small for the
  // whole backlog, ten times the statements or more, and the purge overran its interval.
  it('grows its batches back once past the slow rows', async () => {
    await postgres.pool.query('INSERT INTO expiring SELECT n, n FROM generate_series(1, 3030) AS n');
    // Only rows 1-30 are slow here (20 ms each: 30 together outlast the 400 ms timeout).
    await postgres.pool.query(`CREATE OR REPLACE FUNCTION slow_delete() RETURNS trigger LANGUAGE plpgsql AS
      $$ BEGIN PERFORM pg_sleep(CASE WHEN OLD.id = 0 THEN 1 WHEN OLD.id <= 30 THEN 0.02 ELSE 0 END); RETURN OLD; END $$`);
    if (!timed) throw new Error('no pool');
    let statements = 0;
    const counted = aroundQueries(timed, (_text, run) => ((statements += 1), run()));
    try {
      expect(await purgeInBatches(counted, { table: 'expiring', key: 'id' }, 5_000, 1_000)).to.equal(3_030);
    } finally {
      await postgres.pool.query(`CREATE OR REPLACE FUNCTION slow_delete() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN PERFORM pg_sleep(CASE WHEN OLD.id = 0 THEN 1 ELSE 0.02 END); RETURN OLD; END $$`);
    }
    // 1,000 and 100 time out, then batches of 10 past the slow rows, then larger again: about 25
    // statements, where staying at 10 rows took over 300.
    expect(statements).to.be.below(40);
  });

  it('still fails when one row alone outlasts the statement timeout', async () => {
    await postgres.pool.query('INSERT INTO expiring VALUES (0, 1)');
    if (!timed) throw new Error('no pool');
    await expect(purgeInBatches(timed, { table: 'expiring', key: 'id' }, 60, 60)).to.be.rejectedWith(
      /statement timeout/,
    );
  });
});
