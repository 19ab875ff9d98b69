import type pg from 'pg';
import { isReadOnlyFailure } from './read-only-connection.ts';
import { withPooledClient } from './with-pooled-client.ts';
import { withRetry } from './with-retry.ts';

/**
 * Runs `work` in one transaction on one pooled connection, retried whole on a deadlock or a
 * serialization failure (with-retry.ts). `work` must only touch the database through `client`, so
 * a retry repeats exactly what was rolled back. A connection the server ended, one whose rollback
 * failed, or one that reached a server taking no writes is destroyed rather than pooled again
 * (with-pooled-client.ts).
 */
export function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return withRetry(() =>
    withPooledClient(pool, async (client, drop) => {
      try {
        await client.query('BEGIN');
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        // Connected to a server that takes no writes (a former primary): dropped, not pooled again.
        if (isReadOnlyFailure(error)) drop(error as Error);
        await client.query('ROLLBACK').catch((rollbackError: unknown) => {
          drop(rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError)));
        });
        throw error;
      }
    }),
  );
}
