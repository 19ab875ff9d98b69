import { expect } from 'chai';
import pg from 'pg';
import { createBenchDatabase } from '../../../scripts/lib/bench-database.ts';
import type { Stoppable } from '../../../scripts/lib/stop-on-signal.ts';
import { testPostgres } from '../../support/test-stack.ts';

/** Whether the server has a database of that name. */
async function exists(serverUrl: string, database: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    return rowCount === 1;
  } finally {
    await client.end();
  }
}

describe('createBenchDatabase', function () {
  this.timeout(60_000);
  let server: string;
  before(async function () {
    server = process.env.DATABASE_URL ?? (await testPostgres()).url;
  });

  it("drops the database on an operator's server when the bench stops, even with a pool still open", async function () {
    const stops: Stoppable[] = [];
    const url = await createBenchDatabase(server, 'bench_test', stops);
    const database = new URL(url).pathname.slice(1);
    // The bench's own pool, still connected when a signal stops it mid-run.
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    pool.on('error', () => undefined);
    await pool.query('CREATE TABLE seeded AS SELECT generate_series(1, 10) AS i');
    expect(await exists(server, database)).to.equal(true);

    expect(stops).to.have.length(1);
    for (const stop of stops.splice(0)) await stop.stop();
    expect(await exists(server, database)).to.equal(false);
    await pool.end();
  });
});
