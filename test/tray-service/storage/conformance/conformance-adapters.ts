import { MongoClient } from 'mongodb';
import { createLogger } from '../../../../shared/logging/create-logger.ts';
import { openMongoStorage } from '../../../../tray-service/storage/mongodb/open-mongo-storage.ts';
import { openPostgresStorage } from '../../../../tray-service/storage/postgres/open-postgres-storage.ts';
import type { StorageEngine, TrayStorage } from '../../../../tray-service/storage/port.ts';
import { uniqueName } from '../../../support/suite-resources.ts';
import { createPostgresDatabase } from '../../../support/create-postgres-database.ts';
import { testStack } from '../../../support/test-stack.ts';

/** Every engine the port has: the coverage check fails unless each ran every case. */
export const REQUIRED_ENGINES: readonly StorageEngine[] = ['postgres', 'mongodb'];

export interface OpenedStorage {
  readonly storage: TrayStorage;
  /**
   * The same database opened once more, as a second process of the tray opens it: opened on first
   * use, the same one after that (closed by `drop`).
   */
  peer(): Promise<TrayStorage>;
  /** Closes the storage and drops its database. */
  drop(): Promise<void>;
}

/**
 * What an adapter implements of the port beyond its core. A case that needs a capability runs on
 * every adapter that has it; the coverage check lists the cases an adapter is not yet run with.
 */
export interface Capabilities {
  /** The inbox port (storage.inbox): views, marks, wake-ups, mutes. */
  readonly inbox: boolean;
  /** Removals in the worker's writes (storage.writes.applyRemovals). */
  readonly removals: boolean;
}
export type Capability = keyof Capabilities;

export interface ConformanceAdapter {
  readonly engine: StorageEngine;
  readonly capabilities: Capabilities;
  /** Opens the adapter on a new database of its own, as production opens it (schema, indexes). */
  open(): Promise<OpenedStorage>;
}

const logger = createLogger({ name: 'conformance', level: 'silent' });

/**
 * One database opened by `open` (again by `peer`, as a second tray process would); `drop`
 * closes every instance, then removes the database with `dropDatabase`.
 */
async function opened(
  open: () => Promise<TrayStorage>,
  dropDatabase: () => Promise<void>,
): Promise<OpenedStorage> {
  const storage = await open();
  let peer: Promise<TrayStorage> | undefined;
  return {
    storage,
    peer: () => (peer ??= open()),
    async drop() {
      // A peer that failed to open has nothing to close.
      const another = await peer?.catch(() => undefined);
      await another?.close();
      await storage.close();
      await dropDatabase();
    },
  };
}

/**
 * TRAY_FANOUT_BATCH: on PostgreSQL a handful, so a fan-out or a removal in any community of the
 * cases above a few members goes in statements of parts, and every case checks those against the
 * model. On MongoDB each part is a round of reads and writes, which FerretDB takes tens of
 * milliseconds for: parts of 100 split the cases' large communities (up to 1,200 members, 12
 * rounds) and leave the small ones whole, where 7 took a 1,200-member case past its 20 s.
 */
const PG_FAN_OUT_BATCH = 7;
const MONGO_FAN_OUT_BATCH = 100;

/** On the test FerretDB, or the MongoDB server MONGODB_URI names. */
const mongodb: ConformanceAdapter = {
  engine: 'mongodb',
  capabilities: { inbox: true, removals: true },
  async open() {
    const { mongoUri } = testStack();
    const dbName = uniqueName('conformance');
    return opened(
      () =>
        openMongoStorage(mongoUri, dbName, {
          appName: 'conformance',
          logger,
          fanOutBatch: MONGO_FAN_OUT_BATCH,
        }),
      async () => {
        const client = await MongoClient.connect(mongoUri);
        try {
          await client.db(dbName).dropDatabase();
        } finally {
          await client.close();
        }
      },
    );
  },
};

/** On a database of its own on the test PostgreSQL, migrated at open as in production. */
const postgres: ConformanceAdapter = {
  engine: 'postgres',
  capabilities: { inbox: true, removals: true },
  async open() {
    const database = await createPostgresDatabase('conformance');
    return opened(
      () =>
        openPostgresStorage(database.url, {
          poolSize: 8,
          statementTimeoutMs: 30_000,
          applicationName: 'conformance',
          fanOutBatch: PG_FAN_OUT_BATCH,
        }),
      () => database.drop(),
    );
  },
};

export const conformanceAdapters: readonly ConformanceAdapter[] = [postgres, mongodb];
