import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';

/** The schema's versions: numbered SQL files, applied in order, each once. */
export const MIGRATIONS_DIR = join(import.meta.dirname, 'migrations');

/**
 * One number every instance of the tray service agrees on, so only one of them migrates at a
 * time: the others wait for the lock and then find nothing left to do.
 */
const MIGRATION_LOCK = 7_240_311;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 4)),
      name: file.slice(5, -4),
      sql: readFileSync(join(dir, file), 'utf8'),
    }));
}

/**
 * Brings the database's schema up to date at start-up. Idempotent, and safe when several
 * instances start at once: everything runs in one transaction under a transaction-level advisory
 * lock, so a second instance waits, then sees the versions the first recorded. A failing
 * migration rolls back whole and stops start-up with its version in the message.
 */
export async function migrate(pool: pg.Pool, migrations = readMigrations()): Promise<number[]> {
  const client = await pool.connect();
  // A connection ended while checked out (a restart, an administrator, the pool's keepalive finding
  // the server gone) also emits 'error', which the pool listens to only on idle connections:
  // uncaught, it would end the process instead of failing this attempt, which start-up retries.
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken ??= error;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    // The pool's statement timeout (PG_STATEMENT_TIMEOUT_MS) is for the API's and the worker's
    // statements; a migration may rewrite a large table for minutes, and cutting it short would
    // stop every start-up after an upgrade. LOCAL: it ends with this transaction.
    await client.query('SET LOCAL statement_timeout = 0');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version integer PRIMARY KEY,
         name text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const done = new Set(
      (await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map(
        (row) => row.version,
      ),
    );
    const applied: number[] = [];
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      try {
        await client.query(migration.sql);
      } catch (error) {
        throw new Error(
          `schema migration ${migration.version} (${migration.name}) failed: ${(error as Error).message}`,
          { cause: error },
        );
      }
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        migration.version,
        migration.name,
      ]);
      applied.push(migration.version);
    }
    await client.query('COMMIT');
    return applied;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.off('error', onError);
    // A broken connection is destroyed rather than returned to the pool.
    client.release(broken);
  }
}
