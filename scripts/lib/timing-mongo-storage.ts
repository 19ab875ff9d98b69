import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient, type Db } from 'mongodb';
import { createLogger } from '../../shared/logging/create-logger.ts';
import { openMongoStorage } from '../../tray-service/storage/mongodb/open-mongo-storage.ts';
import type { TrayStorage } from '../../tray-service/storage/port.ts';
import { startFerretOnPostgres, type FerretOnPostgres } from './local-servers.ts';
import { stopOnSignal } from './stop-on-signal.ts';

/**
 * Runs a by-hand timing (`name`, scripts/time-mongo-*.ts) on the MongoDB adapter, opened as the tray
 * opens it on a database of its own, with a plain client's handle on the same database for what
 * the timing writes or reads straight. On MONGODB_URI's server when set, else on FerretDB 1.24
 * started on a throwaway PostgreSQL (the test server, whose figures are not MongoDB's). The
 * database is dropped and what was started is stopped afterwards, also on failure or a signal.
 */
export async function withTimingMongoStorage(
  name: string,
  time: (opened: { storage: TrayStorage; db: Db }) => Promise<void>,
): Promise<void> {
  const given = process.env.MONGODB_URI;
  const dir = given ? undefined : mkdtempSync(join(tmpdir(), `${name}-`));
  const dbName = `${name.replaceAll('-', '_')}_${Date.now()}`;
  let servers: FerretOnPostgres | undefined;
  let client: MongoClient | undefined;
  let storage: TrayStorage | undefined;
  // Also on Ctrl-C (SIGTERM, SIGHUP) and a failure while opening: an interrupted timing left its
  // database of millions of documents on the operator's server, or its servers running.
  const stop = stopOnSignal(async () => {
    await client?.db(dbName).dropDatabase();
    await client?.close();
    await storage?.close();
    await servers?.stop();
  }, dir);
  try {
    if (dir) servers = await startFerretOnPostgres({ dir, durability: 'persistent' });
    const uri = servers?.ferret.url ?? (given as string);
    client = await MongoClient.connect(uri);
    const logger = createLogger({ name, level: 'silent' });
    storage = await openMongoStorage(uri, dbName, { appName: name, logger });
    await time({ storage, db: client.db(dbName) });
  } finally {
    await stop();
  }
}
