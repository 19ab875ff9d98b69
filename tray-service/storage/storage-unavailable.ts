import {
  isMongoConnectionLost,
  isMongoRefusingWrites,
  isMongoUnavailable,
} from './mongodb/driver/mongo-unavailable.ts';
import {
  isPostgresConnectionLost,
  isPostgresRefusingWrites,
  isPostgresUnavailable,
} from './postgres/postgres-unavailable.ts';
import { StorageBusyError } from './storage-busy-error.ts';

/**
 * Either adapter's "the database cannot serve this now" (unreachable, failing over, out of time or
 * of connections, a write kept waiting by others): a 503 with Retry-After to an API caller.
 */
export const isStorageUnavailable = (error: unknown): boolean =>
  error instanceof StorageBusyError || isMongoUnavailable(error) || isPostgresUnavailable(error);

/**
 * Either adapter's "the connection this ran on failed", which says nothing of the statement: the
 * worker runs such a job again at once without spending an attempt.
 */
export const isStorageConnectionLost = (error: unknown): boolean =>
  isMongoConnectionLost(error) || isPostgresConnectionLost(error);

/**
 * Either adapter's "I answer, but take no writes now" (a full disk; FerretDB over a read-only
 * PostgreSQL), which
 * may last as long as an operator needs and is never the job's fault: the worker holds its jobs
 * without spending attempts until a write passes again.
 */
export const isStorageRefusingWrites = (error: unknown): boolean =>
  isMongoRefusingWrites(error) || isPostgresRefusingWrites(error);
