import pg from 'pg';
import { uniqueName } from './suite-resources.ts';
import { testPostgres } from './test-stack.ts';

export interface SuitePostgres {
  /** A database of the enclosing suite's own, dropped afterwards. */
  readonly url: string;
  readonly pool: pg.Pool;
}

/** The server tests create their databases on: DATABASE_URL when set, else the stack's own cluster. */
async function serverUrl(): Promise<string> {
  return process.env.DATABASE_URL ?? (await testPostgres()).url;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** Registers hooks giving the enclosing `describe` its own PostgreSQL database (empty, no schema). */
export function usePostgres(): SuitePostgres {
  const database = uniqueName('pg').toLowerCase();
  let url = '';
  let pool: pg.Pool | undefined;
  before(async function () {
    this.timeout(60_000);
    const server = await serverUrl();
    const admin = new pg.Client({ connectionString: server });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${database}`);
    } finally {
      await admin.end();
    }
    url = withDatabase(server, database);
    pool = new pg.Pool({ connectionString: url, max: 4 });
    // The drop below ends any connection still closing; without a listener that is an uncaught error.
    pool.on('error', () => undefined);
  });
  after(async function () {
    this.timeout(30_000);
    await pool?.end();
    if (!url) return;
    const admin = new pg.Client({ connectionString: await serverUrl() });
    await admin.connect();
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  });
  return {
    get url() {
      if (!url) throw new Error('usePostgres: used before the suite started');
      return url;
    },
    get pool() {
      if (!pool) throw new Error('usePostgres: used before the suite started');
      return pool;
    },
  };
}
