import { UNREACHABLE_SOCKET_CODES } from '../../../shared/errors/unreachable-socket-codes.ts';

/**
 * SQLSTATEs of one connection that failed while the server may well serve others: ended by the
 * server or an operator, or reaching a server that takes no writes (a former primary, after a
 * failover behind one address; in-transaction.ts drops such a connection, so the next statement
 * takes another).
 */
const POSTGRES_CONNECTION_LOST = new Set([
  '57P01', // admin_shutdown: the server is shutting down, or an operator ended the connection
  '57P02', // crash_shutdown
  '25006', // read_only_sql_transaction: a write reached a server that takes none
  '08000', // connection_exception
  '08003', // connection_does_not_exist
  '08006', // connection_failure
]);

/** SQLSTATEs with which PostgreSQL says "not now", never "this query is wrong". */
const POSTGRES_UNAVAILABLE = new Set([
  ...POSTGRES_CONNECTION_LOST,
  '57P03', // cannot_connect_now: starting up, shutting down or recovering
  '53300', // too_many_connections (the server's or the role's limit)
  '57014', // query_canceled: PG_STATEMENT_TIMEOUT_MS ran out
  '53000', // insufficient_resources
  '53100', // disk_full
  '53200', // out_of_memory
  '55P03', // lock_not_available: lock_timeout ran out
  // Run again by the adapter first (with-retry.ts): met after its tries, contention that passes.
  '40P01', // deadlock_detected
  '40001', // serialization_failure
  '08001', // sqlclient_unable_to_establish_sqlconnection
  '08004', // sqlserver_rejected_establishment_of_sqlconnection
]);

/**
 * SQLSTATEs of a server that answers, even its ping, but takes no writes for as long as an
 * operator needs: a full disk. Never the statement's own fault, however often it meets it. Not
 * read_only_sql_transaction: the ping itself fails on a read-only server (read-only-connection.ts),
 * so one met while the ping passes is the statement's connection's (above) or its own.
 */
const POSTGRES_REFUSING_WRITES = new Set([
  '53100', // disk_full
]);

/** Socket codes of a connection cut after it was made (the others say no connection could be). */
const SOCKET_CUT = new Set(['ECONNRESET', 'EPIPE']);

/** node-postgres's own errors for a connection lost mid-query. */
const POSTGRES_LOST_MESSAGES = [
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
];

/** ... and for a pool that cannot connect in time. */
const POSTGRES_CONNECTION_MESSAGES = [...POSTGRES_LOST_MESSAGES, 'timeout exceeded when trying to connect'];

const codeOf = (error: Error): unknown => (error as { code?: unknown }).code;

/** True for node-postgres errors that mean "PostgreSQL cannot serve this now", as opposed to a bad query. */
export function isPostgresUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = codeOf(error);
  if (typeof code === 'string' && (POSTGRES_UNAVAILABLE.has(code) || UNREACHABLE_SOCKET_CODES.has(code))) {
    return true;
  }
  return POSTGRES_CONNECTION_MESSAGES.some((message) => error.message.startsWith(message));
}

/**
 * True for node-postgres errors of the statement's connection alone (a subset of the above): the
 * same statement on another connection may pass at once. A timeout or a full server is not one.
 */
export function isPostgresConnectionLost(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = codeOf(error);
  if (typeof code === 'string' && (POSTGRES_CONNECTION_LOST.has(code) || SOCKET_CUT.has(code))) return true;
  return POSTGRES_LOST_MESSAGES.some((message) => error.message.startsWith(message));
}

/**
 * True for node-postgres errors of a server that refuses writes while it answers reads (a subset
 * of isPostgresUnavailable): its ping passes, so only a write tells when it takes them again.
 */
export function isPostgresRefusingWrites(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = codeOf(error);
  return typeof code === 'string' && POSTGRES_REFUSING_WRITES.has(code);
}
