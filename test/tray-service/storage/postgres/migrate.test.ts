import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate, readMigrations } from '../../../../tray-service/storage/postgres/migrate.ts';
import { usePostgres } from '../../../support/use-postgres.ts';

function migrationsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
  for (const [name, sql] of Object.entries(files)) writeFileSync(join(dir, name), sql);
  return dir;
}

describe('storage/postgres migrate', () => {
  const pg = usePostgres();
  beforeEach(async () => {
    await pg.pool.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
  });

  it('applies numbered files in order, once, and records their versions', async () => {
    const dir = migrationsDir({
      '0002_second.sql': 'ALTER TABLE things ADD COLUMN size integer;',
      '0001_first.sql': 'CREATE TABLE things (id integer PRIMARY KEY);',
      'README.md': 'not a migration',
    });
    expect(await migrate(pg.pool, readMigrations(dir))).to.deep.equal([1, 2]);
    expect(await migrate(pg.pool, readMigrations(dir))).to.deep.equal([]);
    const columns = await pg.pool.query(
      "SELECT column_name FROM information_schema.columns WHERE table_name = 'things' ORDER BY 1",
    );
    expect(columns.rows.map((row: { column_name: string }) => row.column_name)).to.deep.equal(['id', 'size']);
  });

  it('applies each version once when several instances start at the same moment', async () => {
    const dir = migrationsDir({
      '0001_counted.sql': 'CREATE TABLE runs (n serial PRIMARY KEY); INSERT INTO runs DEFAULT VALUES;',
    });
    const results = await Promise.all(Array.from({ length: 4 }, () => migrate(pg.pool, readMigrations(dir))));
    expect(results.filter((applied) => applied.length > 0)).to.deep.equal([[1]]);
    const runs = await pg.pool.query<{ count: string }>('SELECT count(*) FROM runs');
    expect(runs.rows[0]?.count).to.equal('1');
  });

  it('rolls a failing migration back whole and names it', async () => {
    const dir = migrationsDir({
      '0001_ok.sql': 'CREATE TABLE kept_out (id integer);',
      '0002_broken.sql': 'CREATE TABLE oops (;',
    });
    await expect(migrate(pg.pool, readMigrations(dir))).to.be.rejectedWith(/migration 2 \(broken\)/);
    const table = await pg.pool.query("SELECT to_regclass('kept_out') AS found");
    expect(table.rows[0]?.found).to.equal(null);
  });
});
