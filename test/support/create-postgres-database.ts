import pg from 'pg';
import { uniqueName } from './suite-resources.ts';
import { testPostgres } from './test-stack.ts';

export interface CreatedDatabase {
  /** The new database's URL. */
  readonly url: string;
  /** Drops it, ending any connection still open to it. */
  drop(): Promise<void>;
}

/** Runs one statement on the server's `postgres` database over a connection of its own. */
async function onServer(server: string, sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

export interface DatabaseOptions {
  /** A URL of the server's `postgres` database: DATABASE_URL's server when set, else the test stack's cluster. */
  readonly server?: string;
  /** What follows `CREATE DATABASE name`: a template and locale of its own, say. */
  readonly createWith?: string;
}

/** A new, empty database (no schema) named after `prefix`. */
export async function createPostgresDatabase(
  prefix: string,
  options: DatabaseOptions = {},
): Promise<CreatedDatabase> {
  const on = options.server ?? process.env.DATABASE_URL ?? (await testPostgres()).url;
  const database = uniqueName(prefix).toLowerCase();
  await onServer(on, `CREATE DATABASE ${database} ${options.createWith ?? ''}`.trimEnd());
  const url = new URL(on);
  url.pathname = `/${database}`;
  return {
    url: url.toString(),
    drop: () => onServer(on, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`),
  };
}
