import { connectMongo } from '../../shared/mongo/connect-mongo.ts';
import type { StorageEngine, TrayStorage } from '../../tray-service/storage/port.ts';
import { createLogger } from '../../shared/logging/create-logger.ts';
import { openMongoStorage } from '../../tray-service/storage/mongodb/open-mongo-storage.ts';
import { openPostgresStorage } from '../../tray-service/storage/postgres/open-postgres-storage.ts';
import { uniqueName } from './suite-resources.ts';
import { testStack } from './test-stack.ts';
import { usePostgres } from './use-postgres.ts';

/** The adapter the tests run on: PostgreSQL (the default), or MongoDB with TEST_STORAGE=mongodb. */
export const testEngine: StorageEngine = process.env.TEST_STORAGE === 'mongodb' ? 'mongodb' : 'postgres';

export interface SuiteStorage {
  readonly engine: StorageEngine;
  /** The suite's own storage (its own database), opened as the service opens it. */
  readonly storage: TrayStorage;
  /**
   * Opens a further storage on the same database (another process of the service, say); closed
   * with the suite.
   */
  another(): Promise<TrayStorage>;
  /**
   * The variables that make a process of the service (or a script) open this same storage:
   * TRAY_STORAGE and DATABASE_URL, or MONGODB_URI and MONGODB_DB.
   */
  readonly env: Record<string, string>;
}

/**
 * Registers hooks giving the enclosing `describe` a storage of its own: a database of the default
 * adapter (PostgreSQL), or of the MongoDB adapter with TEST_STORAGE=mongodb (or of `engine`, for
 * an adapter's own tests), migrated, and closed and dropped afterwards.
 */
export function useTrayStorage(engine: StorageEngine = testEngine): SuiteStorage {
  const opened: TrayStorage[] = [];
  let open: (() => Promise<TrayStorage>) | undefined;
  let env: () => Record<string, string>;
  // Registered first, so it runs before the database is dropped (mocha runs `after` hooks in order).
  after(async function () {
    this.timeout(30_000);
    for (const storage of opened.splice(0)) await storage.close();
  });
  if (engine === 'postgres') {
    const postgres = usePostgres();
    env = () => ({ TRAY_STORAGE: 'postgres', DATABASE_URL: postgres.url });
    open = () =>
      openPostgresStorage(postgres.url, {
        poolSize: 4,
        statementTimeoutMs: 30_000,
        applicationName: 'tests',
      });
  } else {
    const dbName = uniqueName('test');
    env = () => ({ TRAY_STORAGE: 'mongodb', MONGODB_URI: testStack().mongoUri, MONGODB_DB: dbName });
    open = () =>
      openMongoStorage(testStack().mongoUri, dbName, {
        appName: 'tests',
        logger: createLogger({ name: 'test', level: 'silent' }),
      });
    after(async () => {
      const { client, db } = await connectMongo(testStack().mongoUri, dbName, { appName: 'tests' });
      await db.dropDatabase().catch(() => undefined);
      await client.close();
    });
  }
  const openOne = async () => {
    if (!open) throw new Error('useTrayStorage: not set up');
    const storage = await open();
    opened.push(storage);
    return storage;
  };
  before(async function () {
    this.timeout(60_000);
    await openOne();
  });
  return {
    engine,
    get storage() {
      const [first] = opened;
      if (!first) throw new Error('useTrayStorage: used before the suite started');
      return first;
    },
    another: openOne,
    get env() {
      return env();
    },
  };
}
