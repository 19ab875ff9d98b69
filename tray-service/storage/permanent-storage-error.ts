import { SchemaUpgradeError } from './schema-upgrade-error.ts';

/**
 * PostgreSQL's SQLSTATEs that no retry fixes: the database does not exist (3D000), the password is
 * wrong (28P01), the server refuses this user or address (28000).
 */
const PERMANENT_POSTGRES = new Set(['3D000', '28P01', '28000']);

/** MongoDB's AuthenticationFailed. */
const MONGO_AUTHENTICATION_FAILED = 18;

/**
 * Whether opening the storage failed for a reason retrying cannot fix (start-up then stops at
 * once): a wrong database name or credentials, a URI the driver cannot parse, or a schema upgrade
 * the server refuses. Anything else
 * (refused, timed out, server starting) may pass.
 */
export function isPermanentStorageError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error instanceof SchemaUpgradeError) return !error.retryable;
  const { code } = error as Error & { code?: unknown };
  if (typeof code === 'string' && PERMANENT_POSTGRES.has(code)) return true;
  if (code === MONGO_AUTHENTICATION_FAILED) return true;
  return error.name === 'MongoParseError' || error.name === 'MongoInvalidArgumentError';
}
