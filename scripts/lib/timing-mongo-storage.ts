import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient, type Db } from 'mongodb';
import { createLogger } from '../../shared/logging/create-logger.ts';
import { openMongoStorage } from '../../tray-service/storage/mongodb/open-mongo-storage.ts';
import type { TrayStorage } from '../../tray-service/storage/port.ts';
import { startFerretOnPostgres, type FerretOnPostgres } from './local-servers.ts';

/**
 * Runs a by-hand timing (`name`, scripts/time-mongo-*.ts) on the MongoDB adapter, opened as the tray
 * opens it on a database of its own, with a plain client's handle on the same database for what
 * the timing writes or reads straight. On MONGODB_URI's server when set, else on FerretDB 1.24
 * started on a throwaway PostgreSQL (the test server, whose figures are not MongoDB's). The
 * database is dropped and what was started is stopped afterwards, also on failure.
 */
export async function withTimingMongoStorage(
  name: string,
  time: (opened: { storage: TrayStorage; db: Db }) => Promise<void>,
): Promise<void> {
  let servers: FerretOnPostgres | undefined;
  let dir: string | undefined;
  let uri = process.env.MONGODB_URI;
  if (!uri) {
    dir = mkdtempSync(join(tmpdir(), `${name}-`));
    servers = await startFerretOnPostgres({ dir, durability: 'persistent' });
    uri = servers.ferret.url;
  }
  const dbName = `${name.replaceAll('-', '_')}_${Date.now()}`;
  const logger = createLogger({ name, level: 'silent' });
  const storage = await openMongoStorage(uri, dbName, { appName: name, logger });
  const client = await MongoClient.connect(uri);
  try {
    await time({ storage, db: client.db(dbName) });
  } finally {
    await client.db(dbName).dropDatabase();
    await client.close();
    await storage.close();
    await servers?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}
