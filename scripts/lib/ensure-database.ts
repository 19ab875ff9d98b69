import { pgAdminClient } from './pg-admin-client.ts';

/**
 * The URL of database `name` on the server at `serverUrl`, created when missing (the dev stack's
 * tray database beside the server's own `postgres` database). `name` is a plain identifier.
 */
export async function ensureDatabase(serverUrl: string, name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
  const client = pgAdminClient(serverUrl);
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
