import { MongoClient } from 'mongodb';
import pg from 'pg';
import { createLogger } from '../../../../shared/logging/create-logger.ts';
import { openMongoStorage } from '../../../../tray-service/storage/mongodb/open-mongo-storage.ts';
import { openPostgresStorage } from '../../../../tray-service/storage/postgres/open-postgres-storage.ts';
import type { StorageEngine, TrayStorage } from '../../../../tray-service/storage/port.ts';
import { uniqueName } from '../../../support/suite-resources.ts';
import { testPostgres, testStack } from '../../../support/test-stack.ts';

/** Every engine the port has: the coverage check fails unless each ran every case. */
export const REQUIRED_ENGINES: readonly StorageEngine[] = ['postgres', 'mongodb'];

export interface OpenedStorage {
  readonly storage: TrayStorage;
  /** The same database opened once more, as a second process of the tray opens it (closed by `drop`). */
  openAgain(): Promise<TrayStorage>;
  /** Closes the storage and drops its database. */
  drop(): Promise<void>;
}

export interface ConformanceAdapter {
  readonly engine: StorageEngine;
  /** Opens the adapter on a new database of its own, as production opens it (schema, indexes). */
  open(): Promise<OpenedStorage>;
}

const logger = createLogger({ name: 'conformance', level: 'silent' });

/** On the test FerretDB, or the MongoDB server MONGODB_URI names. */
const mongodb: ConformanceAdapter = {
  engine: 'mongodb',
  async open() {
    const { mongoUri } = testStack();
    const dbName = uniqueName('conformance');
    const open = () => openMongoStorage(mongoUri, dbName, { appName: 'conformance', logger });
    const storage = await open();
    const again: TrayStorage[] = [];
    return {
      storage,
      async openAgain() {
        const opened = await open();
        again.push(opened);
        return opened;
      },
      async drop() {
        for (const opened of again) await opened.close();
        await storage.close();
        const client = await MongoClient.connect(mongoUri);
        try {
          await client.db(dbName).dropDatabase();
        } finally {
          await client.close();
        }
      },
    };
  },
};

/** A database of its own on the test PostgreSQL (or DATABASE_URL's server), dropped by `drop`. */
export async function createPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const server = process.env.DATABASE_URL ?? (await testPostgres()).url;
  const database = uniqueName('conformance').toLowerCase();
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: server });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${database}`);
  const url = new URL(server);
  url.pathname = `/${database}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`) };
}

/** On a database of its own on the test PostgreSQL, migrated at open as in production. */
const postgres: ConformanceAdapter = {
  engine: 'postgres',
  async open() {
    const database = await createPostgresDatabase();
    const open = () =>
      openPostgresStorage(database.url, {
        poolSize: 8,
        statementTimeoutMs: 30_000,
        applicationName: 'conformance',
      });
    const storage = await open();
    const again: TrayStorage[] = [];
    return {
      storage,
      async openAgain() {
        const opened = await open();
        again.push(opened);
        return opened;
      },
      async drop() {
        for (const opened of again) await opened.close();
        await storage.close();
        await database.drop();
      },
    };
  },
};

export const conformanceAdapters: readonly ConformanceAdapter[] = [postgres, mongodb];
