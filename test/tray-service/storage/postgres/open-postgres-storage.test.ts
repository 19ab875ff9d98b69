import { expect } from 'chai';
import type { TrayStorage } from '../../../../tray-service/storage/port.ts';
import { openPostgresStorage } from '../../../../tray-service/storage/postgres/open-postgres-storage.ts';
import { readMigrations } from '../../../../tray-service/storage/postgres/migrate.ts';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { usePostgres } from '../../../support/use-postgres.ts';
import { comment, NOW, RETENTION_DAYS, RETENTION_MS } from './tray-fixture.ts';

const options = { poolSize: 3, statementTimeoutMs: 5_000, applicationName: 'tray-open-test' };

describe('storage/postgres openPostgresStorage', () => {
  const pg = usePostgres();
  const opened: TrayStorage[] = [];
  const open = async () => {
    const storage = await openPostgresStorage(pg.url, options);
    opened.push(storage);
    return storage;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((storage) => storage.close()));
    // Each test starts from an empty tray on the migrated schema.
    const { rows } = await pg.pool.query<{ names: string | null }>(
      `SELECT string_agg(quote_ident(tablename), ', ') AS names FROM pg_tables
       WHERE schemaname = 'public' AND tablename <> 'schema_migrations'`,
    );
    if (rows[0]?.names) await pg.pool.query(`TRUNCATE ${rows[0].names}`);
  });

  it('brings the schema up to date at start, once however many instances start together', async () => {
    const [storage] = await Promise.all([open(), open(), open()]);
    const { rows } = await pg.pool.query<{ version: number }>(
      'SELECT version FROM schema_migrations ORDER BY 1',
    );
    expect(rows.map((row) => row.version)).to.deep.equal(
      readMigrations().map((migration) => migration.version),
    );
    expect(storage?.engine).to.equal('postgres');
  });

  it('answers ping, names its connections, and refuses to ping once closed (closing twice is harmless)', async () => {
    const storage = await open();
    await storage.ping();
    const { rows } = await pg.pool.query(
      "SELECT 1 FROM pg_stat_activity WHERE application_name = 'tray-open-test' AND datname = current_database()",
    );
    expect(rows.length).to.be.greaterThan(0);
    await storage.close();
    await storage.close();
    await expect(storage.ping()).to.be.rejected;
  });

  it('assembles every part on one database: what one part writes, the others of the same storage see', async () => {
    const storage = await open();
    const context = { now: NOW, retentionDays: RETENTION_DAYS };
    await storage.writes.applyPersonal([comment('p-1', 'u-cid', 1)], context);
    expect(await storage.records.count('u-ana', NOW)).to.equal(1);
    await storage.lastRead.record('u-ana', NOW);
    expect(await storage.lastRead.latest('u-ana')).to.equal(NOW);
    expect(await storage.clears.latest('u-ana')).to.equal(0);
    await storage.blockList.block('n_u-ana', 'u-cid');
    expect(await storage.blockList.blockedAmong('n_u-ana', ['u-cid'])).to.deep.equal(new Set(['u-cid']));
    await storage.bans.apply([{ userId: 'u-cid', banned: true, at: NOW }]);
    expect(await storage.bans.all()).to.deep.equal([{ userId: 'u-cid', banned: true, at: NOW }]);
    expect(await storage.decisions.pendingAmong(['none'])).to.deep.equal([]);
    expect(
      await storage.members.importBatch([{ communityId: 'c-1', userId: 'u-ana', since: NOW }], NOW),
    ).to.include({ inserted: 1 });
  });

  it('purges expired records and expired events, and counts each', async () => {
    const storage = await open();
    const context = { now: NOW, retentionDays: RETENTION_DAYS };
    await storage.writes.applyPersonal([comment('p-9', 'u-cid', 0)], context);
    const receivedAt = new Date(NOW);
    for (const key of ['e1', 'e2']) {
      await storage.events.store(
        { key, event: 'comment.created', webhook: 'w', data: {}, receivedAt },
        { status: 'applied' },
        { retentionDays: 1, now: receivedAt },
      );
    }
    expect(await storage.purgeExpired(new Date(NOW + DAY_MS))).to.deep.equal({ records: 0, events: 2 });
    expect(await storage.purgeExpired(new Date(NOW + RETENTION_MS + DAY_MS))).to.deep.equal({
      records: 1,
      events: 0,
    });
  });

  it('fails to open on a database that does not exist, leaving nothing connected', async () => {
    const url = new URL(pg.url);
    url.pathname = '/no_such_database';
    await expect(openPostgresStorage(url.toString(), options)).to.be.rejectedWith(/no_such_database/);
  });
});
