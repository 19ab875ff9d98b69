import type pg from 'pg';
import { withPooledClient } from './with-pooled-client.ts';

/** read_only_sql_transaction: a write sent to a server that takes none (a standby, or read-only set). */
const READ_ONLY = '25006';

/**
 * Whether a statement failed because its connection reaches a server that takes no writes. After a
 * failover behind one address (a DNS name, a virtual IP), connections made before it stay on the
 * old primary, now a standby, and would answer every write so for as long as they live: a busy
 * pool never lets them go idle long enough to close. Such a connection is dropped instead, and the
 * next one reaches whatever the address names now.
 */
export function isReadOnlyFailure(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === READ_ONLY;
}

/**
 * The ping (readiness, and the worker's gate): throws unless the server answers and takes writes.
 * `SELECT 1` answers on a standby too, and the worker would spend every job's attempts on writes it
 * refuses; a server that is read-only counts as not answering (the worker waits, jobs keep their
 * attempts), and the ping's connection is dropped so the next probe connects afresh.
 */
export function pingWritable(pool: pg.Pool): Promise<void> {
  return withPooledClient(pool, async (client, drop) => {
    try {
      const { rows } = await client.query<{ read_only: string }>(
        "SELECT current_setting('transaction_read_only') AS read_only",
      );
      if (rows[0]?.read_only === 'on')
        throw new Error('the database takes no writes (a standby, or transaction_read_only on)');
    } catch (error) {
      drop(error instanceof Error ? error : new Error(String(error)));
      throw error;
    }
  });
}
