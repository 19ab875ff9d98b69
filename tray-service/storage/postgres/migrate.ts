import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import type pg from 'pg';
import { SchemaBehindError } from '../schema-behind-error.ts';
import { SchemaUpgradeError } from '../schema-upgrade-error.ts';
import { isPostgresUnavailable } from './postgres-unavailable.ts';
import { withPooledClient } from './with-pooled-client.ts';

/** The schema's versions: numbered SQL files, applied in order, each once. */
export const MIGRATIONS_DIR = join(import.meta.dirname, 'migrations');

/**
 * One number every instance of the tray service agrees on, so only one of them migrates at a
 * time: the others wait for the lock and then find nothing left to do.
 */
export const MIGRATION_LOCK = 7_240_311;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * The folder's migrations in order. An SQL file not named as one, or two of one version (two
 * branches each adding the next number), stop it: either would be skipped without a word (the
 * second of a version finds its number recorded), and databases would differ.
 */
export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const files = readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .sort();
  const byVersion = new Map<number, string>();
  return files.map((file) => {
    if (!/^\d{4}_[a-z0-9_]+\.sql$/.test(file))
      throw new Error(`${file}: expected a schema migration named NNNN_lower_case_words.sql`);
    const version = Number(file.slice(0, 4));
    const other = byVersion.get(version);
    if (other !== undefined)
      throw new Error(`two schema migrations numbered ${version}: ${other} and ${file}`);
    byVersion.set(version, file);
    return { version, name: file.slice(5, -4), sql: readFileSync(join(dir, file), 'utf8') };
  });
}

/** SQLSTATE undefined_table: schema_migrations missing, a database the tray never opened. */
const UNDEFINED_TABLE = '42P01';

/** SQLSTATE lock_not_available: a statement waited out lock_timeout. */
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * SQLSTATEs deadlock_detected and serialization_failure: the server rolled the migration back for
 * another session's sake (a data migration's rows meeting the previous version's writes during a
 * rolling upgrade). Nothing of the migration's stays, so it runs again.
 */
const ROLLED_BACK_FOR_OTHERS = new Set(['40P01', '40001']);

/**
 * Whether another start-up attempt may pass where a migration failed with `error`: PostgreSQL
 * could not serve it now (the connection cut, EPIPE included; the server starting, shutting down
 * or full), as the adapter reads every failure. Any other is the statement's own (a privilege the
 * role lacks, a constraint the data breaks), met again on every try.
 */
export const isRetryableMigrationFailure = (error: unknown): boolean => isPostgresUnavailable(error);

/** What a migration run tells its caller as it goes (start-up logs it). */
export type MigrationEvent =
  | { kind: 'applying'; version: number; name: string }
  | { kind: 'applied'; version: number; name: string; ms: number }
  | { kind: 'lock-wait'; version: number; name: string; attempt: number; retryInMs: number }
  | { kind: 'retry'; version: number; name: string; attempt: number; retryInMs: number; reason: string };

export interface MigrateOptions {
  /**
   * Longest one statement of a migration waits for a lock (lock_timeout) before the migration is
   * rolled back and tried again. A waiting ALTER TABLE queues every later read and write of its
   * table behind it: behind a long query or an open transaction (a pg_dump, an analyst's query on
   * stored_events) the previous version's traffic would stall for as long as that runs. Rolled
   * back, it lets them through, and the next try takes the lock when the holder is gone.
   */
  lockWaitMs?: number;
  /** The first pause before a try again after a lock wait; it doubles up to MAX_RETRY_PAUSE_MS. */
  retryPauseMs?: number;
  onEvent?: (event: MigrationEvent) => void;
}

const LOCK_WAIT_MS = 3_000;
const RETRY_PAUSE_MS = 500;
const MAX_RETRY_PAUSE_MS = 10_000;

/**
 * For a read-only open (an export with a read-only role, or on a replica), which never migrates:
 * throws SchemaBehindError unless every migration of this version is applied. One that an older
 * version left would read columns or tables that are not there, or rows not yet brought into
 * shape. A newer schema passes: migrations add columns, tables and indexes, and drop only indexes,
 * defaults and constraints an older version's reads never named.
 */
export async function requireMigrated(pool: pg.Pool, migrations = readMigrations()): Promise<void> {
  const latest = Math.max(0, ...migrations.map((migration) => migration.version));
  const applied = await pool
    .query<{ version: number }>('SELECT coalesce(max(version), 0)::int AS version FROM schema_migrations')
    .then(
      ({ rows }) => rows[0]?.version ?? 0,
      (error: unknown) => {
        if ((error as { code?: unknown }).code === UNDEFINED_TABLE) return 0;
        throw error;
      },
    );
  if (applied < latest) {
    throw new SchemaBehindError(
      applied === 0 ? 'not there (the tray service never opened this database)' : `at migration ${applied}`,
      `migration ${latest}`,
    );
  }
}

/**
 * Brings the database's schema up to date at start-up. Idempotent, and safe when several
 * instances start at once. Each migration runs in its own transaction and is recorded in it, so a
 * long one (a scan of tray_records) holds its own locks only, not those of the migrations before
 * it, which a still-running earlier instance's writes would wait for. Each of those transactions
 * takes a transaction-level advisory lock and reads schema_migrations again under it: instances
 * migrating together apply each version once, in order (one applies a version only once the ones
 * before it are recorded). The lock is not held across transactions (a session-level one would be
 * session state, which PgBouncer's transaction mode does not keep: docs/scaling.md). A failing
 * migration rolls back whole and stops start-up with its version in the message; the ones before
 * it stay applied, and the next start-up begins at it. One that waited out its lock wait
 * (MigrateOptions.lockWaitMs) is not failing: it is rolled back and tried again until it runs.
 */
export async function migrate(
  pool: pg.Pool,
  migrations = readMigrations(),
  options: MigrateOptions = {},
): Promise<number[]> {
  const lockWaitMs = options.lockWaitMs ?? LOCK_WAIT_MS;
  const tell = options.onEvent ?? (() => undefined);
  // A connection ended while checked out (a restart, an administrator, the pool's keepalive finding
  // the server gone) fails this attempt, which start-up retries, and is destroyed, not pooled again.
  return withPooledClient(pool, async (client) => {
    const recorded = async () => {
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
      return new Set(rows.map((row) => row.version));
    };
    const done = await inMigrationTransaction(client, lockWaitMs, async () => {
      await client.query(
        `CREATE TABLE IF NOT EXISTS schema_migrations (
           version integer PRIMARY KEY,
           name text NOT NULL,
           applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      return recorded();
    });
    const applied: number[] = [];
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      const { version, name } = migration;
      const started = Date.now();
      let pauseMs = options.retryPauseMs ?? RETRY_PAUSE_MS;
      for (let attempt = 1; ; attempt++) {
        try {
          const ran = await inMigrationTransaction(client, lockWaitMs, async () => {
            // Another instance may have applied it since.
            if ((await recorded()).has(version)) return false;
            if (attempt === 1) tell({ kind: 'applying', version, name });
            await client.query(migration.sql);
            await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
              version,
              name,
            ]);
            return true;
          });
          if (ran) {
            applied.push(version);
            tell({ kind: 'applied', version, name, ms: Date.now() - started });
          }
          break;
        } catch (error) {
          const code = String((error as { code?: unknown }).code);
          const rolledBack = ROLLED_BACK_FOR_OTHERS.has(code);
          if (code === LOCK_NOT_AVAILABLE || rolledBack) {
            const again = { version, name, attempt, retryInMs: pauseMs };
            tell(
              rolledBack
                ? { kind: 'retry', ...again, reason: (error as Error).message }
                : { kind: 'lock-wait', ...again },
            );
            await setTimeout(pauseMs);
            pauseMs = Math.min(pauseMs * 2, MAX_RETRY_PAUSE_MS);
            continue;
          }
          throw new SchemaUpgradeError(
            `schema migration ${version} (${name}) failed: ${(error as Error).message}`,
            {
              cause: error,
              retryable: isRetryableMigrationFailure(error),
            },
          );
        }
      }
    }
    return applied;
  });
}

/**
 * One transaction of the migration run under the migration lock, rolled back whole when `work`
 * fails; the wait for the lock may be as long as another instance's migration. The pool's statement
 * timeout (PG_STATEMENT_TIMEOUT_MS) is for the API's and the worker's statements; a migration may
 * rewrite a large table for minutes, and cutting it short would stop every start-up after an
 * upgrade. Its waits for the tables' locks are bounded instead (MigrateOptions.lockWaitMs), set
 * after the migration lock is held so the wait for another instance is not. LOCAL: the pool's
 * settings are back once the transaction ends.
 */
async function inMigrationTransaction<T>(
  client: pg.PoolClient,
  lockWaitMs: number,
  work: () => Promise<T>,
): Promise<T> {
  await client.query('BEGIN');
  try {
    // One round trip. No bound on the wait for another instance's migration, whatever the role
    // sets (`ALTER ROLE ... SET lock_timeout` would stop every instance starting during a long
    // one). PostgreSQL learns its client is gone only when it answers: a process killed
    // mid-migration left it running to its end, holding its locks; checked every second instead
    // (PostgreSQL 14 and later, on the systems that offer it; elsewhere as before).
    await client.query(
      `SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = 0;
       DO $$ BEGIN PERFORM set_config('client_connection_check_interval', '1000', true);
       EXCEPTION WHEN OTHERS THEN NULL; END $$`,
    );
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(lockWaitMs))}`);
    const result = await work();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
