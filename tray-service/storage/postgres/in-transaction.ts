import type pg from 'pg';
import { isReadOnlyFailure } from './read-only-connection.ts';
import { withRetry } from './with-retry.ts';

/**
 * Runs `work` in one transaction on one pooled connection, retried whole on a deadlock or a
 * serialization failure (with-retry.ts). `work` must only touch the database through `client`, so
 * a retry repeats exactly what was rolled back.
 *
 * A connection the server ends while it is checked out here (a restart, a failover, an
 * administrator's termination) also reports that as an 'error' event on the client; the pool
 * listens only to idle connections, so without a listener of our own the event would be uncaught
 * and end the process. The caller sees the failure on its statement instead, and the broken
 * connection is destroyed rather than returned to the pool.
 */
export function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return withRetry(async () => {
    const client = await pool.connect();
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken ??= error;
    };
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      // Connected to a server that takes no writes (a former primary): dropped, not pooled again.
      if (isReadOnlyFailure(error)) broken ??= error as Error;
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken ??= rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
      throw error;
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  });
}
