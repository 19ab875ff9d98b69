import { expect } from 'chai';
import type pg from 'pg';
import { migrate } from '../../../../tray-service/storage/postgres/migrate.ts';
import { usePostgres } from '../../../support/use-postgres.ts';
import { distributedBy, localTables, referenceTables } from './distribution-columns.ts';

interface UniqueKey {
  table: string;
  index: string;
  columns: string[];
}

/** Every primary key, unique constraint and unique index of the schema's tables, with its columns. */
async function uniqueKeys(pool: pg.Pool, schema: string): Promise<UniqueKey[]> {
  const { rows } = await pool.query<UniqueKey>(
    `SELECT t.relname AS table, i.relname AS index,
            array_agg(a.attname::text ORDER BY k.ord) FILTER (WHERE a.attname IS NOT NULL) AS columns
     FROM pg_index x
     JOIN pg_class t ON t.oid = x.indrelid
     JOIN pg_class i ON i.oid = x.indexrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
     CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, ord)
     LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
     WHERE n.nspname = $1 AND x.indisunique
     GROUP BY t.relname, i.relname
     ORDER BY 1, 2`,
    [schema],
  );
  return rows.map((row) => ({ ...row, columns: row.columns ?? [] }));
}

/** The unique keys of distributed tables that leave out the table's distribution column. */
async function keysMissingTheirDistributionColumn(
  pool: pg.Pool,
  schema: string,
  columns: Readonly<Record<string, string>>,
): Promise<string[]> {
  return (await uniqueKeys(pool, schema))
    .filter((key) => columns[key.table] !== undefined && !key.columns.includes(columns[key.table] ?? ''))
    .map((key) => `${key.table}.${key.index} (${key.columns.join(', ')}) lacks ${columns[key.table]}`);
}

describe('storage/postgres schema: ready to distribute', () => {
  const pg = usePostgres();
  before(async () => {
    await migrate(pg.pool);
  });

  it('declares every table once: distributed (with its column), reference, or local', async () => {
    const { rows } = await pg.pool.query<{ tablename: string }>(
      "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
    );
    const declared = [...Object.keys(distributedBy), ...referenceTables, ...localTables];
    expect(new Set(declared).size, 'a table declared twice').to.equal(declared.length);
    expect(rows.map((row) => row.tablename)).to.have.members(declared);
  });

  it('gives every distributed table its distribution column as a NOT NULL column of type text (co-location)', async () => {
    const { rows } = await pg.pool.query<{ table: string; column: string; type: string; nullable: string }>(
      `SELECT table_name AS table, column_name AS column, data_type AS type, is_nullable AS nullable
       FROM information_schema.columns WHERE table_schema = 'public'`,
    );
    for (const [table, column] of Object.entries(distributedBy)) {
      const found = rows.find((row) => row.table === table && row.column === column);
      expect(found, `${table}.${column}`).to.deep.include({ type: 'text', nullable: 'NO' });
    }
  });

  it('puts the distribution column in every primary key, unique constraint and unique index', async () => {
    expect(await keysMissingTheirDistributionColumn(pg.pool, 'public', distributedBy)).to.deep.equal([]);
    // Every distributed table has a primary key to check.
    const tablesWithKeys = new Set((await uniqueKeys(pg.pool, 'public')).map((key) => key.table));
    for (const table of Object.keys(distributedBy)) expect(tablesWithKeys, table).to.include(table);
  });

  it('has no foreign key (distributed tables could only reference co-located or reference tables)', async () => {
    const { rows } = await pg.pool.query(
      "SELECT conname FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = 'public' AND contype = 'f'",
    );
    expect(rows).to.deep.equal([]);
  });

  it('would notice a unique key without the distribution column', async () => {
    await pg.pool.query(`CREATE SCHEMA scratch;
      CREATE TABLE scratch.bad (user_id text NOT NULL, key text PRIMARY KEY, other text UNIQUE);
      CREATE UNIQUE INDEX bad_pair ON scratch.bad (user_id, other);`);
    expect(await keysMissingTheirDistributionColumn(pg.pool, 'scratch', { bad: 'user_id' })).to.deep.equal([
      'bad.bad_other_key (other) lacks user_id',
      'bad.bad_pkey (key) lacks user_id',
    ]);
  });
});
