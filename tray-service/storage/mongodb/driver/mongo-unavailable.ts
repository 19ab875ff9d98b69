import {
  MongoBulkWriteError,
  MongoClientClosedError,
  MongoDriverError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoServerClosedError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
} from 'mongodb';
import { writeConcernFailureOf } from './write-concern-failure.ts';

/**
 * Server error codes with which MongoDB says "not now", never "this query is wrong": the codes the
 * driver itself retries a read or write on once (its RETRYABLE_READ_ERROR_CODES, which it does not
 * export), plus a time limit run out (50), a write concern timed out (64) and no member matching
 * the read preference (133). The driver's one retry covers a quick election; a longer one (a
 * replica set without a majority, a primary shutting down) reaches the app with these.
 */
const MONGO_UNAVAILABLE_CODES = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  50, // MaxTimeMSExpired
  64, // WriteConcernTimeout (WriteConcernFailed before 8.1): no majority took the write in time
  89, // NetworkTimeout
  91, // ShutdownInProgress
  133, // FailedToSatisfyReadPreference
  134, // ReadConcernMajorityNotAvailableYet
  189, // PrimarySteppedDown
  262, // ExceededTimeLimit
  9001, // SocketException
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
]);

/**
 * FerretDB (1.x, on PostgreSQL) answers every command with InternalError (code 1) while its own
 * PostgreSQL is down or restarting, the backend's failure in the message: a SQLSTATE of a lost or
 * refused connection (the ones postgres-unavailable.ts takes; not 08P01, a protocol violation, a
 * bug), or its driver's failure to connect. Only those: any other InternalError may be the
 * command's own.
 */
const FERRETDB_BACKEND_DOWN =
  /\(SQLSTATE (?:08(?:000|001|003|004|006)|57P0[123]|53300|57014)\)|failed to connect to `|\bdial error\b/;
const FERRETDB_INTERNAL_ERROR = 1;

/**
 * ... and while its PostgreSQL answers but takes no writes (read-only, or a full disk): SQLSTATE
 * 25006 or 53100 in the message, as postgres-unavailable.ts takes them.
 */
const FERRETDB_BACKEND_REFUSING_WRITES = /\(SQLSTATE (?:25006|53100)\)/;

/**
 * The pool's "closed" to a command waiting for a connection: the driver does not export its class
 * (cmap/errors.js), only its name.
 */
const isPoolClosed = (error: unknown): boolean =>
  error instanceof MongoDriverError && error.name === 'MongoPoolClosedError';

/** True for driver errors that mean "MongoDB cannot serve this now", as opposed to a bad query. */
export function isMongoUnavailable(error: unknown): boolean {
  const cause = unwrapped(error);
  if (
    cause instanceof MongoServerSelectionError ||
    cause instanceof MongoNetworkError ||
    cause instanceof MongoTopologyClosedError ||
    cause instanceof MongoNotConnectedError ||
    // A client closed under a running command: the heartbeat's reconnect (connect-mongo.ts).
    cause instanceof MongoClientClosedError ||
    // ... or under one waiting for a connection (the pool's), and a server removed from the
    // topology (a replica set reconfigured, Atlas moving a host).
    cause instanceof MongoServerClosedError ||
    isPoolClosed(cause)
  )
    return true;
  if (!(cause instanceof MongoServerError)) return false;
  // A write the server applied but no majority confirmed in time names its cause apart.
  const concern = writeConcernFailureOf(cause)?.code;
  if (typeof concern === 'number' && MONGO_UNAVAILABLE_CODES.has(concern)) return true;
  if (typeof cause.code === 'number' && MONGO_UNAVAILABLE_CODES.has(cause.code)) return true;
  return (
    cause.code === FERRETDB_INTERNAL_ERROR &&
    (FERRETDB_BACKEND_DOWN.test(cause.message) || FERRETDB_BACKEND_REFUSING_WRITES.test(cause.message))
  );
}

/**
 * True for a server that answers but refuses writes for as long as an operator needs (a subset of
 * isMongoUnavailable's classes): FerretDB over a read-only or full PostgreSQL. MongoDB itself
 * has no such state that a ping passes: a member that takes no writes is not the primary the
 * driver selects, and a full disk stops mongod.
 */
export function isMongoRefusingWrites(error: unknown): boolean {
  const cause = unwrapped(error);
  return (
    cause instanceof MongoServerError &&
    cause.code === FERRETDB_INTERNAL_ERROR &&
    FERRETDB_BACKEND_REFUSING_WRITES.test(cause.message)
  );
}

/**
 * The driver's own error a bulk write (insertMany, bulkWrite) wrapped: a network or server
 * selection failure reaches the caller as a MongoBulkWriteError holding it, without its class.
 */
function unwrapped(error: unknown): unknown {
  if (!(error instanceof MongoBulkWriteError)) return error;
  const wrapped: unknown = error.errorResponse;
  return wrapped instanceof Error && wrapped !== error ? wrapped : error;
}

/**
 * True for the driver's "the connection this ran on failed" (a subset of the above): the same
 * command on another connection may pass at once.
 */
export const isMongoConnectionLost = (error: unknown): boolean =>
  unwrapped(error) instanceof MongoNetworkError;
