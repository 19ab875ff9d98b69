import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { startFerret, type LocalServer } from '../../../../scripts/lib/local-servers.ts';
import { pino } from 'pino';
import { openMongoStorage } from '../../../../tray-service/storage/mongodb/open-mongo-storage.ts';
import type { TrayStorage } from '../../../../tray-service/storage/port.ts';
import { uniqueName } from '../../../support/suite-resources.ts';
import { testPostgres } from '../../../support/test-stack.ts';
import { waitFor } from '../../../support/wait-for.ts';

// The readiness probe and the worker's storage gate ask `ping` whether the database answers. Behind
// a pool its jobs hold (the worker runs 64 at once, FerretDB's pool is 20), a ping on the same pool
// waited for a connection, timed out, and read as an outage: readiness 503 and the worker paused on
// a busy, healthy database. PostgreSQL has had its own connection for the ping; so has MongoDB now.
describe('openMongoStorage: ping beside a pool its calls hold', function () {
  this.timeout(60_000);
  const dbName = uniqueName('mp');
  let storage: TrayStorage;
  let locker: pg.Client | undefined;

  let ferret: LocalServer | undefined;
  let dir = '';

  // A FerretDB of its own on the run's PostgreSQL, whose tables the test locks.
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tray-ping-'));
    ferret = await startFerret({ dir, postgresUrl: (await testPostgres()).ferretUrl });
    const url = new URL(ferret.url);
    url.searchParams.set('maxPoolSize', '2');
    storage = await openMongoStorage(url.toString(), dbName, {
      appName: 'ping-test',
      logger: pino({ level: 'silent' }),
    });
  });

  after(async () => {
    await locker?.query('ROLLBACK').catch(() => undefined);
    await locker?.end();
    await storage?.close();
    await ferret?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers while every pooled connection waits on the database', async () => {
    // Holds FerretDB's table of the records, so reads of it wait in PostgreSQL with their connection.
    locker = new pg.Client({ connectionString: (await testPostgres()).url });
    await locker.connect();
    const { rows } = await locker.query<{ tablename: string }>(
      "SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename LIKE 'tray_records%'",
      [dbName],
    );
    expect(rows, 'FerretDB table of tray_records').to.have.length(1);
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE "${dbName}"."${rows[0]!.tablename}" IN ACCESS EXCLUSIVE MODE`);
    const held = [1, 2].map(() => storage.records.pageAfter(`u-${dbName}`, undefined, 10, Date.now()));
    // Both in the database, each with one of the pool's two connections: seen waiting for the
    // lock (from a session of its own: inside the locker's transaction the view would not change),
    // not slept for, or the ping could find a connection still free and pass without the case.
    const watcher = new pg.Client({ connectionString: (await testPostgres()).url });
    await watcher.connect();
    try {
      await waitFor(
        async () =>
          (
            await watcher.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1",
              [`%${rows[0]!.tablename}%`],
            )
          ).rows[0]?.n === 2,
        10_000,
        'both reads to wait for the locked table',
      );
    } finally {
      await watcher.end();
    }
    const outcome = await Promise.race([
      storage.ping().then(() => 'answered'),
      new Promise((resolve) => setTimeout(() => resolve('waited'), 3_000)),
    ]);
    await locker.query('ROLLBACK');
    await Promise.all(held);
    expect(outcome).to.equal('answered');
  });
});
