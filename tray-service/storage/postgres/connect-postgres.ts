import pg from 'pg';

export interface PostgresOptions {
  /** Connections in this process's pool (PG_POOL_SIZE). */
  poolSize: number;
  /** Longest a statement may run before PostgreSQL cancels it (PG_STATEMENT_TIMEOUT_MS). */
  statementTimeoutMs: number;
  /** Names this process in pg_stat_activity. */
  applicationName: string;
  /**
   * A pool whose callers give up after this long, waiting for a connection or for an answer (the
   * ping's, so a hung server does not pile pings up); by default they wait.
   */
  answerWithinMs?: number;
  /** IDLE_IN_TRANSACTION_MS, unless a test needs it shorter. */
  idleInTransactionMs?: number;
}

/**
 * How long a session may sit idle inside its transaction before the server ends it. The tray's
 * transactions send their statements back to back; one idle for a minute is a client that is gone
 * (its host frozen, the network cut without a FIN, which the server's keepalive notices only after
 * hours), and the locks it holds would fail every writer behind them until then.
 */
export const IDLE_IN_TRANSACTION_MS = 60_000;

/** The session settings every connection of the tray's pools starts with (see below). */
export const POSTGRES_SESSION_OPTIONS = '-c jit=off';

/**
 * Idle time before a connection's first TCP keepalive probe. A statement waiting for its answer
 * leaves nothing unacknowledged on the socket, so when the server vanishes (its host down, the
 * network cut) no TCP timer runs and the statement would wait for ever; PG_STATEMENT_TIMEOUT_MS
 * is the server's and cannot end it. Node probes every second after this, 10 times: such a
 * statement fails about 20 s after the server went (measured), and the pool drops the connection.
 * A server that is only slow, stopped or mid-migration answers the probes from its kernel, so no
 * real work is cut short. Without a delay, Node would leave the system's default (2 hours).
 */
export const KEEPALIVE_IDLE_MS = 10_000;

/**
 * A pool on the URL's database. TLS and any other libpq setting come from the URL itself
 * (`?sslmode=require`, `sslrootcert=...`), which node-postgres reads; the pool size and the
 * statement timeout come from the options so operators can set them apart from the URL.
 *
 * JIT compilation is off for the pool's sessions. The tray's statements are short (a few ms), but
 * the planner costs some of them far above `jit_above_cost` (a fan-out's mute lookup over a table
 * it expects to be large), and then LLVM compiles the statement on every execution: 180-240 ms
 * for a 6 ms batch upsert, which left the worker unable to keep up with 250 comments a second.
 * An `options` parameter in the URL replaces this one, and the idle timeout with it (node-postgres
 * lets the URL win).
 */
export function connectPostgres(url: string, options: PostgresOptions): pg.Pool {
  // Times go to PostgreSQL as UTC. By default node-postgres writes a Date in the process's local
  // time, so what a statement receives depends on the host's TZ: before a zone's standard time its
  // local mean time offset is cut to whole minutes (New York's -4:56:02 sent as -04:56, seconds
  // off), and west of UTC the earliest instant PostgreSQL holds, which a page cursor may carry,
  // went out as the day before and failed the statement. The setting is node-postgres's own, for
  // the process: every pool of the tray comes from here.
  pg.defaults.parseInputDatesAsUTC = true;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize,
    statement_timeout: options.statementTimeoutMs,
    application_name: options.applicationName,
    // In `options`, not a startup parameter of its own: PgBouncer refuses one it does not know,
    // and its operators list `options` among those it ignores already (docs/scaling.md).
    options: `${POSTGRES_SESSION_OPTIONS} -c idle_in_transaction_session_timeout=${options.idleInTransactionMs ?? IDLE_IN_TRANSACTION_MS}`,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
    ...(options.answerWithinMs === undefined
      ? {}
      : { connectionTimeoutMillis: options.answerWithinMs, query_timeout: options.answerWithinMs }),
  });
  // An idle client that loses its server emits on the pool; without a listener that would be an
  // uncaught error. The next query reconnects, and its caller sees the failure.
  pool.on('error', () => undefined);
  return pool;
}
