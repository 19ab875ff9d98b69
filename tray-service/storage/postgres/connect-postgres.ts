import pg from 'pg';

export interface PostgresOptions {
  /** Connections in this process's pool (PG_POOL_SIZE). */
  poolSize: number;
  /** Longest a statement may run before PostgreSQL cancels it (PG_STATEMENT_TIMEOUT_MS). */
  statementTimeoutMs: number;
  /** Names this process in pg_stat_activity. */
  applicationName: string;
}

/**
 * A pool on the URL's database. TLS and any other libpq setting come from the URL itself
 * (`?sslmode=require`, `sslrootcert=...`), which node-postgres reads; the pool size and the
 * statement timeout come from the options so operators can set them apart from the URL.
 */
export function connectPostgres(url: string, options: PostgresOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize,
    statement_timeout: options.statementTimeoutMs,
    application_name: options.applicationName,
  });
  // An idle client that loses its server emits on the pool; without a listener that would be an
  // uncaught error. The next query reconnects, and its caller sees the failure.
  pool.on('error', () => undefined);
  return pool;
}
