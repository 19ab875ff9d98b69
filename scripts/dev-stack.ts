// The quick-start command (`npm start`): Redis and PostgreSQL, with data under .data/ (kept between
// runs; no system service is touched), then the receiver and the tray service (API + worker) on
// the PostgreSQL storage adapter. Ctrl-C stops every child.
import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { ensureDatabase } from './lib/ensure-database.ts';
import { startPostgres, startRedis, type LocalServer } from './lib/local-servers.ts';

const root = resolve(import.meta.dirname, '..');
const dataDir = process.env.STACK_DATA_DIR ?? join(root, '.data');
const receiverPort = process.env.RECEIVER_PORT ?? '8080';
const trayPort = process.env.TRAY_PORT ?? '8081';

/** Development defaults, only where the operator set nothing. Never use these in production. */
const devDefaults: Record<string, string> = {
  LOG_LEVEL: 'info',
  // Tray API tokens: `npm run mint-token -- --user <id>` signs with this (same default).
  JWT_SECRET: 'dev-only-secret-do-not-use-in-production',
  // Receiver (docs/receiver.md): accept webhooks from any address, signed with the documented
  // development secret `dev-secret` (webhook `dev`), spooled under the stack's data directory.
  WEBHOOK_ALLOWLIST: 'off',
  WEBHOOK_SECRETS: 'dev=dev-secret',
  SPOOL_DIR: join(dataDir, 'receiver-spool'),
  // The live tray demo page at /demo (docs/live-tray.md); off by default everywhere else.
  TRAY_DEMO: 'on',
};

const say = (line: string) => process.stdout.write(`[stack] ${line}\n`);
const servers: LocalServer[] = [];
const children: ChildProcess[] = [];
let stopping = false;

async function stopAll(code: number): Promise<never> {
  if (stopping) process.exit(code);
  stopping = true;
  say('stopping');
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done();
          child.once('exit', () => done());
          child.kill('SIGTERM');
        }),
    ),
  );
  for (const server of servers.splice(0).reverse()) await server.stop();
  say('stopped');
  process.exit(code);
}

function run(name: string, script: string, env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, [join(root, script)], {
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  child.once('exit', (code, signal) => {
    if (stopping) return;
    say(`${name} exited (${signal ?? code}); stopping the stack`);
    void stopAll(1);
  });
  children.push(child);
  return child;
}

async function waitHealthy(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
}

process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

try {
  // The operator's own storage when they name one (DATABASE_URL, or MONGODB_URI for MongoDB);
  // otherwise a PostgreSQL of the stack's own.
  const ownStorage = Boolean(process.env.DATABASE_URL ?? process.env.MONGODB_URI);
  const [redis, postgres] = await Promise.all([
    process.env.REDIS_URL ? undefined : startRedis({ dir: join(dataDir, 'redis'), persistent: true }),
    // The user's data: fsync stays on (durability 'persistent').
    ownStorage ? undefined : startPostgres({ dir: join(dataDir, 'postgres'), durability: 'persistent' }),
  ]);
  for (const server of [redis, postgres]) if (server) servers.push(server);
  const env: NodeJS.ProcessEnv = {
    ...devDefaults,
    ...process.env,
    REDIS_URL: redis?.url ?? process.env.REDIS_URL,
    // The tray's tables live in a database of their own on the stack's server.
    ...(postgres ? { DATABASE_URL: await ensureDatabase(postgres.url, 'tray') } : {}),
    RECEIVER_PORT: receiverPort,
    TRAY_PORT: trayPort,
  };
  say(`redis    ${env.REDIS_URL}${redis ? ` (data in ${redis.dir})` : ''}`);
  if (env.DATABASE_URL) {
    say(`postgres ${env.DATABASE_URL}${postgres ? ` (data in ${postgres.dir})` : ''}`);
  } else {
    say(`mongodb  ${(env.MONGODB_URI ?? '').replace(/\/\/[^@]*@/, '//')}`);
  }
  run('receiver', 'receiver/main.ts', env);
  run('tray-service', 'tray-service/main.ts', env);
  await Promise.all([
    waitHealthy(`http://127.0.0.1:${receiverPort}/healthz`, 60_000),
    waitHealthy(`http://127.0.0.1:${trayPort}/healthz`, 60_000),
  ]);
  say(`receiver http://localhost:${receiverPort}  (webhooks: POST /webhooks, /healthz, /readyz, /metrics)`);
  say(`tray     http://localhost:${trayPort}  (API, /healthz, /readyz, /metrics)`);
  if (env.TRAY_DEMO === 'on')
    say(`demo     http://localhost:${trayPort}/demo  (a live tray; token: npm run mint-token)`);
  say('ready. Press Ctrl-C to stop.');
} catch (error) {
  say(`start-up failed: ${(error as Error).message}`);
  await stopAll(1);
}
