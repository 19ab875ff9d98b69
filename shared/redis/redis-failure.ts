import { describeRedisTarget, type RedisTarget } from './redis-target.ts';

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

/** Whether Redis refused the connection's password (or wanted one): retrying cannot help. */
export function isRedisAuthError(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return (
    AUTH_CODES.has(redisErrorCode(error)) || (typeof message === 'string' && OLD_WRONG_PASSWORD.test(message))
  );
}

/**
 * One line for an operator: which Redis (host and port, never the URL's password) and why.
 */
export function describeRedisFailure(target: RedisTarget, error: unknown): string {
  const where = describeRedisTarget(target);
  const code = redisErrorCode(error);
  return isRedisAuthError(error)
    ? `Redis at ${where} did not accept the credentials: ${code}`
    : `cannot reach Redis at ${where}: ${code}`;
}
