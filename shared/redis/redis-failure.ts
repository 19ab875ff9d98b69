import { describeRedisTarget, type RedisTarget } from './redis-target.ts';
import { UNREACHABLE_SOCKET_CODES } from '../errors/unreachable-socket-codes.ts';

/** Redis's answers to a missing or wrong password (a ReplyError's first word). */
const AUTH_CODES = new Set(['NOAUTH', 'WRONGPASS', 'WRONGPASSWORD']);

/**
 * The short reason of a Redis error: a socket code (ECONNREFUSED, ENOTFOUND, ETIMEDOUT) or a Redis
 * error's code word (NOAUTH, WRONGPASS). Only these, because an ioredis ReplyError also carries the
 * command's arguments, and an AUTH command's argument is the password.
 */
export function redisErrorCode(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && code !== '') return code;
  const word = typeof message === 'string' ? /^([A-Z][A-Z_]+)\b/.exec(message)?.[1] : undefined;
  return word ?? (typeof message === 'string' && message !== '' ? message : String(error));
}

/** Redis before 6 refused a wrong password with a plain `ERR invalid password`. */
const OLD_WRONG_PASSWORD = /^ERR invalid password/i;

/** Whether this error itself is Redis refusing the password. */
function refusesPassword(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return (
    AUTH_CODES.has(redisErrorCode(error)) || (typeof message === 'string' && OLD_WRONG_PASSWORD.test(message))
  );
}

/**
 * The password refusal behind `error`: itself, or its cause (a cluster's failed command carries
 * the refusal of the last node asked for the slot map: create-redis.ts). Undefined when none.
 */
function passwordRefusal(error: unknown): unknown {
  for (let at = error, depth = 0; at !== undefined && at !== null && depth < 4; depth += 1) {
    if (refusesPassword(at)) return at;
    at = (at as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Whether Redis refused the connection's password (or wanted one): retrying cannot help. */
export function isRedisAuthError(error: unknown): boolean {
  return passwordRefusal(error) !== undefined;
}

/**
 * One line for an operator: which Redis (host and port, never the URL's password) and why.
 */
export function describeRedisFailure(target: RedisTarget, error: unknown): string {
  const where = describeRedisTarget(target);
  const refusal = passwordRefusal(error);
  return refusal !== undefined
    ? `Redis at ${where} did not accept the credentials: ${redisErrorCode(refusal)}`
    : `cannot reach Redis at ${where}: ${redisErrorCode(error)}`;
}

/** ioredis's errors for a command it could not get answered: Redis unreachable, not the command refused. */
const UNREACHABLE_NAMES = new Set(['MaxRetriesPerRequestError', 'ClusterAllFailedError']);
const UNREACHABLE_MESSAGES = [
  'Connection is closed', // the connection ended with the command sent or queued
  "Stream isn't writeable", // no connection, and no offline queue to wait in
  "Cluster isn't ready", // the same on a cluster
  'None of startup nodes is available',
];
/** Socket codes of a connection that cannot reach Redis, and Redis's own "not now" replies. */
const UNREACHABLE_CODES = new Set([
  ...UNREACHABLE_SOCKET_CODES,
  'LOADING', // restarting: reading its data set back
  'MASTERDOWN',
  'CLUSTERDOWN',
  'TRYAGAIN',
  // Writes refused for now: full under noeviction (the queue grew during a worker outage), a
  // primary demoted by a failover (the connection is dropped and made again: create-redis.ts),
  // snapshots failing to persist (stop-writes-on-bgsave-error). A permission (NOPERM) is no
  // "not now": it stays a 500 until an operator changes the ACL.
  'OOM',
  'READONLY',
  'MISCONF',
  // A call the hung-Redis breaker cut short, or refused while an earlier one is unanswered.
  'REDIS_TIMEOUT',
  'REDIS_UNANSWERED',
]);

/**
 * Whether a Redis command failed because Redis cannot serve it now (unreachable, restarting, a
 * cluster without a quorum), as opposed to the command being wrong: the caller may try again.
 */
export function isRedisUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (UNREACHABLE_NAMES.has(error.name)) return true;
  if (UNREACHABLE_MESSAGES.some((message) => error.message.startsWith(message))) return true;
  return UNREACHABLE_CODES.has(redisErrorCode(error));
}
