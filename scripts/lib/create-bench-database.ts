import { pgAdminClient } from './pg-admin-client.ts';

/**
 * A fresh database of a bench's own on the server `serverUrl` names, so its tables (and the bare
 * SQL baselines' scratch tables beside them) never meet another run's; returns its URL.
 */
export async function createBenchDatabase(serverUrl: string, prefix: string): Promise<string> {
  const database = `${prefix}_${Date.now()}`;
  const admin = pgAdminClient(serverUrl);
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${database}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}
