import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startPostgres, type LocalServer } from './local-servers.ts';
import { pgAdminClient } from './pg-admin-client.ts';
import { orStop, stopOnSignal } from './stop-on-signal.ts';

/** A database of a timing script's own, and how to drop it (and its server) afterwards. */
export interface ScratchPostgres {
  readonly pool: pg.Pool;
  close(): Promise<void>;
}

/**
 * A fresh database named `<prefix>_<time>` on DATABASE_URL's server when set, else on a throwaway
 * PostgreSQL cluster (fsync on) in a temp dir; close() drops the database and stops that cluster.
 * So does Ctrl-C (or SIGTERM, SIGHUP) at any point, and a failure while opening: a timing seeds
 * millions of rows, and one interrupted left them on the operator's server, or its whole cluster
 * running in the temp dir.
 */
export async function openScratchPostgres(prefix: string, max = 4): Promise<ScratchPostgres> {
  const given = process.env.DATABASE_URL;
  const dir = given ? undefined : mkdtempSync(join(tmpdir(), `${prefix}-`));
  const database = `${prefix}_${Date.now()}`;
  let server: LocalServer | undefined;
  let admin: pg.Client | undefined;
  let created = false;
  let pool: pg.Pool | undefined;
  const close = stopOnSignal(async () => {
    // The drop first: FORCE ends the pool's sessions, where pool.end() would wait for a statement
    // under way (a fan-out of minutes) and a second Ctrl-C, no longer caught, leave it all behind.
    if (created) await admin?.query(`DROP DATABASE ${database} WITH (FORCE)`);
    await pool?.end().catch(() => undefined);
    await admin?.end().catch(() => undefined);
    await server?.stop();
  }, dir);
  const opened = await orStop(
    (async () => {
      if (dir) server = await startPostgres({ dir, durability: 'persistent' });
      const url = server?.url ?? (given as string);
      admin = pgAdminClient(url);
      await admin.connect();
      await admin.query(`CREATE DATABASE ${database}`);
      created = true;
      const dbUrl = new URL(url);
      dbUrl.pathname = `/${database}`;
      pool = new pg.Pool({ connectionString: dbUrl.toString(), max });
      pool.on('error', () => undefined);
      return pool;
    })(),
    close,
  );
  return { pool: opened, close };
}
