import pg from 'pg';
import { createPostgresDatabase, type CreatedDatabase } from './create-postgres-database.ts';

export interface SuitePostgres {
  /** A database of the enclosing suite's own, dropped afterwards. */
  readonly url: string;
  readonly pool: pg.Pool;
}

export interface SuitePostgresOptions {
  /**
   * The server to create the database on (a URL of its `postgres` database), read when the suite
   * starts: a server of the suite's own. DATABASE_URL's server, else the test stack's, by default.
   */
  readonly server?: () => string;
  /** What follows `CREATE DATABASE name` (createPostgresDatabase). */
  readonly createWith?: string;
}

/** Registers hooks giving the enclosing `describe` its own PostgreSQL database (empty, no schema). */
export function usePostgres(options: SuitePostgresOptions = {}): SuitePostgres {
  let database: CreatedDatabase | undefined;
  let pool: pg.Pool | undefined;
  before(async function () {
    this.timeout(60_000);
    database = await createPostgresDatabase('pg', {
      server: options.server?.(),
      createWith: options.createWith,
    });
    pool = new pg.Pool({ connectionString: database.url, max: 4 });
    // The drop below ends any connection still closing; without a listener that is an uncaught error.
    pool.on('error', () => undefined);
  });
  after(async function () {
    this.timeout(30_000);
    await pool?.end();
    await database?.drop();
  });
  return {
    get url() {
      if (!database) throw new Error('usePostgres: used before the suite started');
      return database.url;
    },
    get pool() {
      if (!pool) throw new Error('usePostgres: used before the suite started');
      return pool;
    },
  };
}
