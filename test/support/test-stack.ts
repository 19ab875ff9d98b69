import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startFerretOnPostgres,
  startPostgres,
  startRedis,
  type LocalServer,
  type PostgresServer,
} from '../../scripts/lib/local-servers.ts';

/** The servers the whole test run shares. Suites isolate themselves by database name and queue prefix. */
export interface TestStack {
  redisUrl: string;
  mongoUri: string;
  /** Present only when this run started the server itself (so fault tests may stop it). */
  redis?: LocalServer;
  ferret?: LocalServer;
  postgres?: PostgresServer;
  dir: string;
}

let stack: TestStack | undefined;
const started: LocalServer[] = [];

export function testStack(): TestStack {
  if (!stack) throw new Error('test stack is not running: is test/support/root-hooks.ts loaded?');
  return stack;
}

/**
 * Starts redis-server and FerretDB on a throwaway PostgreSQL cluster in a temp dir, unless
 * REDIS_URL / MONGODB_URI point elsewhere.
 */
export async function startTestStack(): Promise<TestStack> {
  const dir = mkdtempSync(join(tmpdir(), 'tray-test-'));
  const [redis, mongo] = await Promise.all([
    process.env.REDIS_URL ? undefined : startRedis({ dir: join(dir, 'redis') }),
    process.env.MONGODB_URI ? undefined : startFerretOnPostgres({ dir }),
  ]);
  // Stopped in reverse: FerretDB before the PostgreSQL it holds connections to.
  for (const server of [mongo?.postgres, redis, mongo?.ferret]) if (server) started.push(server);
  stack = {
    redisUrl: redis?.url ?? process.env.REDIS_URL ?? '',
    mongoUri: mongo?.ferret.url ?? process.env.MONGODB_URI ?? '',
    redis,
    ferret: mongo?.ferret,
    postgres: mongo?.postgres,
    dir,
  };
  return stack;
}

let ownPostgres: Promise<PostgresServer> | undefined;

/**
 * The PostgreSQL cluster for a FerretDB a test starts (and stops) itself: the stack's, or, when
 * MONGODB_URI points at another server, one started on first use and stopped with the stack.
 * FerretDB servers on one cluster keep apart by database name (one schema each).
 */
export function testPostgres(): Promise<PostgresServer> {
  const current = testStack();
  if (current.postgres) return Promise.resolve(current.postgres);
  ownPostgres ??= startPostgres({ dir: join(current.dir, 'own-postgres') }).then((server) => {
    started.unshift(server);
    return server;
  });
  return ownPostgres;
}

export async function stopTestStack(): Promise<void> {
  const servers = started.splice(0).reverse();
  for (const server of servers) await server.stop();
  if (stack) rmSync(stack.dir, { recursive: true, force: true });
  stack = undefined;
  ownPostgres = undefined;
}

// If mocha is killed or crashes, do not leave servers behind.
process.on('exit', () => {
  for (const server of started) server.process.kill('SIGKILL');
});
