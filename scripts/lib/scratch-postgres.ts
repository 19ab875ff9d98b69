import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startPostgres, type LocalServer } from './local-servers.ts';
import { pgAdminClient } from './pg-admin-client.ts';

/** A database of a timing script's own, and how to drop it (and its server) afterwards. */
export interface ScratchPostgres {
  readonly pool: pg.Pool;
  close(): Promise<void>;
}

/**
 * A fresh database named `<prefix>_<time>` on DATABASE_URL's server when set, else on a throwaway
 * PostgreSQL cluster (fsync on) in a temp dir; close() drops the database and stops that cluster.
 */
export async function openScratchPostgres(prefix: string, max = 4): Promise<ScratchPostgres> {
  let server: LocalServer | undefined;
  let dir: string | undefined;
  let url = process.env.DATABASE_URL;
  if (!url) {
    dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
    server = await startPostgres({ dir, durability: 'persistent' });
    url = server.url;
  }
  const database = `${prefix}_${Date.now()}`;
  const admin = pgAdminClient(url);
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const dbUrl = new URL(url);
  dbUrl.pathname = `/${database}`;
  const pool = new pg.Pool({ connectionString: dbUrl.toString(), max });
  pool.on('error', () => undefined);
  return {
    pool,
    async close() {
      await pool.end();
      await admin.query(`DROP DATABASE ${database} WITH (FORCE)`);
      await admin.end();
      await server?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
