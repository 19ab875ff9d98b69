import { randomUUID } from 'node:crypto';
import type { Db, MongoClient } from 'mongodb';
import { connectMongo } from '../../shared/mongo/connect-mongo.ts';
import { testStack } from './test-stack.ts';

/** A short unique name, so suites never share a database or queue prefix. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
}

export interface SuiteMongo {
  readonly dbName: string;
  readonly db: Db;
  readonly client: MongoClient;
}

/** Registers hooks giving the enclosing `describe` its own database, dropped afterwards. */
export function useMongo(): SuiteMongo {
  const dbName = uniqueName('test');
  let connection: { db: Db; client: MongoClient } | undefined;
  before(async () => {
    connection = await connectMongo(testStack().mongoUri, dbName, { appName: 'tests' });
  });
  after(async () => {
    if (!connection) return;
    await connection.db.dropDatabase().catch(() => undefined);
    await connection.client.close();
  });
  return {
    dbName,
    get db() {
      if (!connection) throw new Error('useMongo: database is used before the suite started');
      return connection.db;
    },
    get client() {
      if (!connection) throw new Error('useMongo: client is used before the suite started');
      return connection.client;
    },
  };
}

/** A queue prefix of the enclosing suite's own. */
export function useQueuePrefix(): string {
  return uniqueName('test');
}
