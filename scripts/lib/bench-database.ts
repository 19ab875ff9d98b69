import { pgAdminClient } from './pg-admin-client.ts';
import type { Stoppable } from './stop-on-signal.ts';

/**
 * A fresh database of a bench's own on the server `serverUrl` names, so its tables (and the bare
 * SQL baselines' scratch tables beside them) never meet another run's; returns its URL. On a server
 * of the operator's (DATABASE_URL) pass the bench's list of what it stops as `dropWith`: the
 * database is dropped with the rest, at the end of the run or on Ctrl-C (a bench's millions of rows
 * are gigabytes, left on a server the bench does not own). A throwaway cluster goes with its folder.
 */
export async function createBenchDatabase(
  serverUrl: string,
  prefix: string,
  dropWith?: Stoppable[],
): Promise<string> {
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
  dropWith?.push({ stop: () => dropBenchDatabase(serverUrl, database) });
  return url.toString();
}

/**
 * FORCE: a pool the bench still holds (stopped by a signal mid-run) would otherwise keep the
 * database in use and the drop would fail.
 */
async function dropBenchDatabase(serverUrl: string, database: string): Promise<void> {
  const admin = pgAdminClient(serverUrl);
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
