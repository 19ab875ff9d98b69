import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFerret, startRedis, type LocalServer } from '../../scripts/lib/local-servers.ts';

/** The servers the whole test run shares. Suites isolate themselves by database name and queue prefix. */
export interface TestStack {
  redisUrl: string;
  mongoUri: string;
  /** Present only when this run started the server itself (so fault tests may stop it). */
  redis?: LocalServer;
  ferret?: LocalServer;
  dir: string;
}

let stack: TestStack | undefined;
const started: LocalServer[] = [];

export function testStack(): TestStack {
  if (!stack) throw new Error('test stack is not running: is test/support/root-hooks.ts loaded?');
  return stack;
}

/** Starts redis-server and FerretDB in a temp dir, unless REDIS_URL / MONGODB_URI point elsewhere. */
export async function startTestStack(): Promise<TestStack> {
  const dir = mkdtempSync(join(tmpdir(), 'tray-test-'));
  const [redis, ferret] = await Promise.all([
    process.env.REDIS_URL ? undefined : startRedis({ dir: join(dir, 'redis'), persistent: true }),
    process.env.MONGODB_URI ? undefined : startFerret({ dir: join(dir, 'ferretdb') }),
  ]);
  for (const server of [redis, ferret]) if (server) started.push(server);
  stack = {
    redisUrl: redis?.url ?? process.env.REDIS_URL ?? '',
    mongoUri: ferret?.url ?? process.env.MONGODB_URI ?? '',
    redis,
    ferret,
    dir,
  };
  return stack;
}

export async function stopTestStack(): Promise<void> {
  await Promise.all(started.splice(0).map((server) => server.stop()));
  if (stack) rmSync(stack.dir, { recursive: true, force: true });
  stack = undefined;
}

// If mocha is killed or crashes, do not leave servers behind.
process.on('exit', () => {
  for (const server of started) server.process.kill('SIGKILL');
});
