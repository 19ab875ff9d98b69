import pg from 'pg';

/**
 * A one-off client of a PostgreSQL server a tool started or was given. Without an 'error'
 * listener, a server going away while it is connected (stopped by the tool's own Ctrl-C while it
 * was still setting up, say) ends the process at once with an unhandled 'error' event, exit 1,
 * instead of the tool's orderly stop. The failure still rejects the call under way, and is handled
 * there.
 */
export function pgAdminClient(connectionString: string): pg.Client {
  const client = new pg.Client({ connectionString });
  client.on('error', () => undefined);
  return client;
}
