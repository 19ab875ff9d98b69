import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostgres, type PostgresServer } from '../../scripts/lib/local-servers.ts';
import { openPostgresStorage } from '../../tray-service/storage/postgres/open-postgres-storage.ts';
import type { TrayStorage } from '../../tray-service/storage/port.ts';

export interface StoppablePostgres {
  /** The server's database (the suite's alone: no other suite uses this server). */
  readonly url: string;
  /** Opens a storage on it (schema migrated), closed with the suite. */
  openStorage(): Promise<TrayStorage>;
  /** Fast shutdown: open connections end with 57P01, new ones are refused (ECONNREFUSED). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
}

/**
 * Registers hooks giving the enclosing suite a PostgreSQL server of its own that a test may stop
 * and start again (outages), unlike the shared test server every other suite uses; `settings` are
 * the server's own (a small lock table, say).
 */
export function useStoppablePostgres(
  options: { settings?: Readonly<Record<string, string>> } = {},
): StoppablePostgres {
  const { settings } = options;
  let dir = '';
  let server: PostgresServer | undefined;
  let running = false;
  const opened: TrayStorage[] = [];
  before(async function () {
    this.timeout(60_000);
    dir = mkdtempSync(join(tmpdir(), 'tray-pg-outage-'));
    server = await startPostgres({ dir, settings });
    running = true;
  });
  after(async function () {
    this.timeout(60_000);
    for (const storage of opened.splice(0)) await storage.close().catch(() => undefined);
    if (running) await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const theServer = () => {
    if (!server) throw new Error('useStoppablePostgres: used before the suite started');
    return server;
  };
  return {
    get url() {
      return theServer().url;
    },
    async openStorage() {
      const storage = await openPostgresStorage(theServer().url, {
        poolSize: 4,
        statementTimeoutMs: 30_000,
        applicationName: 'tests',
      });
      opened.push(storage);
      return storage;
    },
    async stop() {
      await theServer().stop();
      running = false;
    },
    async start() {
      server = await startPostgres({ dir, port: theServer().port, settings });
      running = true;
    },
  };
}
