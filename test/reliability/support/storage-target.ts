import { createLogger } from '../../../shared/logging/create-logger.ts';
import { openMongoStorage } from '../../../tray-service/storage/mongodb/open-mongo-storage.ts';
import type { TrayStorage } from '../../../tray-service/storage/port.ts';
import { openPostgresStorage } from '../../../tray-service/storage/postgres/open-postgres-storage.ts';

/**
 * The tray storage a scenario's processes write and its checks read: a PostgreSQL database (the
 * default adapter) or a MongoDB database (the MongoDB adapter, on FerretDB here).
 */
export type StorageTarget =
  | { readonly engine: 'postgres'; readonly url: string }
  | { readonly engine: 'mongodb'; readonly uri: string; readonly db: string };

/** The variables that make a tray-service process open this storage (docs/storage.md). */
export function storageEnv(target: StorageTarget): Record<string, string> {
  if (target.engine === 'postgres') return { TRAY_STORAGE: 'postgres', DATABASE_URL: target.url };
  return { TRAY_STORAGE: 'mongodb', MONGODB_URI: target.uri, MONGODB_DB: target.db };
}

/**
 * Opens the same storage in the test process, as the service does, so the checks read what the
 * processes wrote through the storage port rather than through one engine's tables.
 */
export function openTargetStorage(target: StorageTarget): Promise<TrayStorage> {
  if (target.engine === 'postgres') {
    return openPostgresStorage(target.url, {
      poolSize: 4,
      statementTimeoutMs: 60_000,
      applicationName: 'reliability',
    });
  }
  return openMongoStorage(target.uri, target.db, {
    appName: 'reliability',
    logger: createLogger({ name: 'reliability', level: 'silent' }),
  });
}

/** Runs `read` on the target's storage opened for it alone, and closes it whatever happens. */
export async function withTargetStorage<T>(
  target: StorageTarget,
  read: (storage: TrayStorage) => Promise<T>,
): Promise<T> {
  const storage = await openTargetStorage(target);
  try {
    return await read(storage);
  } finally {
    await storage.close();
  }
}
