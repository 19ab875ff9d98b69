import { join } from 'node:path';
import { freePort, startFerret, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import { connectMongo } from '../../../shared/mongo/connect-mongo.ts';
import { uniqueName } from '../../support/suite-resources.ts';
import { testPostgres } from '../../support/test-stack.ts';
import { useStoppablePostgres } from '../../support/use-stoppable-postgres.ts';
import type { StorageTarget } from './storage-target.ts';

/** The database server a scenario stops, and the storage its processes use on it. */
export interface StoppedDatabase {
  /** For the figures line: which adapter and server met the outage. */
  readonly name: string;
  target(): StorageTarget;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/**
 * Registers hooks giving the enclosing suite a FerretDB of its own (on the test stack's
 * PostgreSQL, under `dir()`), which a scenario may stop (SIGTERM) and start again on the same port:
 * the MongoDB adapter's outage. Its database is dropped and the server killed after the suite.
 */
export function useStoppableFerret(dir: () => string, tag: string): StoppedDatabase {
  let ferret: LocalServer | undefined;
  let port = 0;
  const db = uniqueName(tag);
  const start = async () => {
    ferret = await startFerret({
      dir: join(dir(), 'ferret'),
      port,
      postgresUrl: (await testPostgres()).ferretUrl,
    });
  };
  const server = () => {
    if (!ferret) throw new Error('useStoppableFerret: used before the suite started');
    return ferret;
  };
  before(async () => {
    port = await freePort();
    await start();
  });
  after(async () => {
    const { client, db: database } = await connectMongo(server().url, db, { appName: 'reliability' });
    await database.dropDatabase().catch(() => undefined);
    await client.close();
    await server().stop('SIGKILL');
  });
  return {
    name: 'FerretDB',
    target: () => ({ engine: 'mongodb', uri: server().url, db }),
    stop: () => server().stop(),
    start,
  };
}

/**
 * Registers hooks giving the enclosing suite a PostgreSQL server of its own (useStoppablePostgres),
 * which a scenario may stop (fast shutdown) and start again: the default storage's outage. A
 * server of the suite's own, as stopping the test stack's would break every other suite.
 */
export function useStoppablePostgresDatabase(): StoppedDatabase {
  const postgres = useStoppablePostgres();
  return {
    name: 'PostgreSQL',
    target: () => ({ engine: 'postgres', url: postgres.url }),
    stop: () => postgres.stop(),
    start: () => postgres.start(),
  };
}
