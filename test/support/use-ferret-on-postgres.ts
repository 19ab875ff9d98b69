import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Db, MongoClient } from 'mongodb';
import { startFerret, type LocalServer } from '../../scripts/lib/local-servers.ts';
import { connectMongo, type MongoConnection } from '../../shared/mongo/connect-mongo.ts';
import { uniqueName } from './suite-resources.ts';
import { testPostgres, testStack } from './test-stack.ts';

export interface SuiteFerret {
  readonly db: Db;
  readonly client: MongoClient;
  /** The PostgreSQL database FerretDB stores its data in (what FERRETDB_POSTGRESQL_URL names). */
  readonly postgresUrl: string;
  /** A further database of this suite's own on the same server (dropped afterwards). */
  otherDb(): Db;
}

/**
 * A database on FerretDB-on-PostgreSQL for the enclosing `describe`: the stack's server, or, when
 * MONGODB_URI points at another server, a FerretDB of the suite's own on the test PostgreSQL, so
 * the FerretDB-specific behaviour is tested whatever the stack runs on.
 */
export function useFerretOnPostgres(): SuiteFerret {
  const dbName = uniqueName('fp');
  const others: string[] = [];
  let own: { server: LocalServer; dir: string } | undefined;
  let connection: MongoConnection | undefined;
  let postgresUrl = '';
  before(async function () {
    this.timeout(60_000);
    const stack = testStack();
    let uri = stack.mongoUri;
    if (stack.postgresUrl) {
      postgresUrl = stack.postgresUrl;
    } else {
      const postgres = await testPostgres();
      const dir = mkdtempSync(join(tmpdir(), 'suite-ferret-'));
      own = { server: await startFerret({ dir, postgresUrl: postgres.ferretUrl }), dir };
      uri = own.server.url;
      postgresUrl = postgres.url;
    }
    connection = await connectMongo(uri, dbName, { appName: 'tests' });
  });
  after(async function () {
    this.timeout(30_000);
    if (connection) {
      for (const name of [dbName, ...others]) {
        await connection.client
          .db(name)
          .dropDatabase()
          .catch(() => undefined);
      }
      await connection.close();
    }
    if (own) {
      await own.server.stop();
      rmSync(own.dir, { recursive: true, force: true });
    }
  });
  const live = () => {
    if (!connection) throw new Error('useFerretOnPostgres: used before the suite started');
    return connection;
  };
  return {
    get db() {
      return live().db;
    },
    get client() {
      return live().client;
    },
    get postgresUrl() {
      return postgresUrl;
    },
    otherDb() {
      const name = uniqueName('fp');
      others.push(name);
      return live().client.db(name);
    },
  };
}
