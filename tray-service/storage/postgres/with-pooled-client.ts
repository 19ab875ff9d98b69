import type pg from 'pg';

/**
 * Runs `work` on a connection checked out of `pool`, and returns it to the pool afterwards, or
 * destroys it when it is broken: `work` says so with `drop(error)`, and so does a connection the
 * server ends while it is checked out (a restart, a failover, an administrator's termination).
 * That last one also reports an 'error' event on the client, which the pool listens to only on
 * idle connections: without a listener here it would be uncaught and end the process, where the
 * caller sees the failure on its statement instead.
 */
export async function withPooledClient<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient, drop: (error: Error) => void) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const drop = (error: Error) => {
    broken ??= error;
  };
  client.on('error', drop);
  try {
    return await work(client, drop);
  } finally {
    client.off('error', drop);
    client.release(broken);
  }
}
