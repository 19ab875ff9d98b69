import type pg from 'pg';
import { withRetry } from './with-retry.ts';

/**
 * Runs `work` in one transaction on one pooled connection, retried whole on a deadlock or a
 * serialization failure (with-retry.ts). `work` must only touch the database through `client`, so
 * a retry repeats exactly what was rolled back.
 */
export function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return withRetry(async () => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  });
}
