// The development stack behind `npm start` (scripts/dev-stack.ts runs it in a process group of its
// own): Redis, PostgreSQL, the receiver and the tray service (on the PostgreSQL storage adapter).
// The first SIGINT or SIGTERM drains and stops every child; a second makes the services exit at once.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { devDataDir, devSecretsPath, loadOrCreateDevSecrets, shownPath } from './dev-secrets.ts';
import { ensureDatabase } from './ensure-database.ts';
import { hostPort } from '../../shared/http/host-port.ts';
import { startPostgres, startRedis, type LocalServer } from './local-servers.ts';

const root = resolve(import.meta.dirname, '../..');
const dataDir = devDataDir();
const receiverPort = process.env.RECEIVER_PORT ?? '8080';
const trayPort = process.env.TRAY_PORT ?? '8081';
const adminPort = process.env.ADMIN_PORT ?? '8082';
// This machine's secrets, made on the first run (scripts/lib/dev-secrets.ts): none is in the repository.
// A data directory of an earlier version gets the servers' passwords added (and set below).
const { secrets, created, added } = loadOrCreateDevSecrets(dataDir);
const secretsFile = shownPath(devSecretsPath(dataDir));
// The servers' files and sockets: the owner's only (mkdir's mode does not apply to an old directory).
chmodSync(dataDir, 0o700);

/** A URL as printed: its password, if any, replaced (the operator's own URLs included). */
const shown = (url: string) => {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '****';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//');
  }
};

/** Development settings, only where the operator set nothing. */
const devDefaults: Record<string, string> = {
  LOG_LEVEL: 'info',
  // Tray API tokens: `npm run mint-token -- --user <id>` signs with the same secret.
  JWT_SECRET: secrets.JWT_SECRET,
  // Receiver (docs/receiver.md): accept webhooks from any address (everything listens on loopback
  // only), signed with this stack's secret of webhook `dev`, spooled under the data directory.
  WEBHOOK_ALLOWLIST: 'off',
  WEBHOOK_SECRETS: `dev=${secrets.WEBHOOK_SECRET}`,
  SPOOL_DIR: join(dataDir, 'receiver-spool'),
  // The admin API and queue dashboard on their own loopback port.
  ADMIN_TOKEN: secrets.ADMIN_TOKEN,
  // The live tray demo page at /demo (docs/live-tray.md); off by default everywhere else.
  TRAY_DEMO: 'on',
};

const say = (line: string) => process.stdout.write(`[stack] ${line}\n`);
const servers: LocalServer[] = [];
const children: ChildProcess[] = [];
let stopping = false;

async function stopAll(code: number): Promise<never> {
  stopping = true;
  say('stopping (the services finish what they are doing; Ctrl-C again to make them exit at once)');
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
  // A URL that cannot be built fails at once: only "not listening yet" is worth waiting out.
  new URL(url);
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

let signals = 0;
function onSignal(): void {
  signals += 1;
  if (signals === 1) {
    void stopAll(0);
  } else if (signals === 2) {
    // Each service takes a second signal as "exit now"; the stack then stops its servers.
    say('second signal: the services exit at once');
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  } else {
    process.exit(1);
  }
}
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

try {
  // The operator's own storage when they name one (DATABASE_URL, or MONGODB_URI for MongoDB);
  // otherwise a PostgreSQL of the stack's own.
  const ownStorage = Boolean(process.env.DATABASE_URL ?? process.env.MONGODB_URI);
  const [redis, postgres] = await Promise.all([
    // Both with a password from the secrets file: another local account can neither queue jobs
    // nor connect as PostgreSQL's superuser (docs/operations.md#security-model).
    process.env.REDIS_URL
      ? undefined
      : startRedis({ dir: join(dataDir, 'redis'), persistent: true, password: secrets.REDIS_PASSWORD }),
    // The user's data: fsync stays on (durability 'persistent').
    ownStorage
      ? undefined
      : startPostgres({
          dir: join(dataDir, 'postgres'),
          durability: 'persistent',
          password: secrets.POSTGRES_PASSWORD,
        }),
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
    ADMIN_PORT: adminPort,
  };
  // Where to reach a service listening on `host`, as a URL's host:port (an IPv6 literal bracketed:
  // `http://::1:8080` is no URL). Every interface is reached on loopback.
  const probe = (host: string | undefined, port: string) =>
    hostPort(host === undefined || host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host, port);
  const receiverAt = probe(env.RECEIVER_HOST ?? env.HOST, receiverPort);
  const trayAt = probe(env.TRAY_HOST ?? env.HOST, trayPort);
  say(
    created
      ? `secrets  made for this machine in ${secretsFile} (mode 0600; kept for later runs)`
      : added.length > 0
        ? `secrets  ${secretsFile}: added ${added.join(', ')} and set them on the stack's servers`
        : `secrets  ${secretsFile}`,
  );
  const passwordIn = (name: string) => `password: ${name} in ${secretsFile}; `;
  say(
    `redis    ${shown(env.REDIS_URL ?? '')}${redis ? ` (${passwordIn('REDIS_PASSWORD')}data in ${redis.dir})` : ''}`,
  );
  if (env.DATABASE_URL) {
    say(
      `postgres ${shown(env.DATABASE_URL)}${postgres ? ` (${passwordIn('POSTGRES_PASSWORD')}data in ${postgres.dir})` : ''}`,
    );
  } else {
    say(`mongodb  ${(env.MONGODB_URI ?? '').replace(/\/\/[^@]*@/, '//')}`);
  }
  run('receiver', 'receiver/main.ts', env);
  run('tray-service', 'tray-service/main.ts', env);
  await Promise.all([
    waitHealthy(`http://${receiverAt}/healthz`, 60_000),
    waitHealthy(`http://${trayAt}/healthz`, 60_000),
  ]);
  const adminAt = probe(env.ADMIN_HOST, adminPort);
  say(`receiver http://${receiverAt}  (webhooks: POST /webhooks, /healthz, /readyz)`);
  say(`tray     http://${trayAt}  (API, /healthz, /readyz; /metrics with METRICS_TOKEN or METRICS_PORT)`);
  say(`admin    http://${adminAt}/admin/queues  (admin API and queue dashboard)`);
  say(`console  http://${adminAt}/admin/console  (events console: stored events, traffic, moderation)`);
  if (env.TRAY_DEMO === 'on') say(`demo     http://${trayAt}/demo  (a live tray; token: npm run mint-token)`);
  const everywhere = [env.HOST, env.RECEIVER_HOST, env.TRAY_HOST, env.ADMIN_HOST].filter(Boolean);
  say(
    everywhere.length === 0
      ? 'listening on 127.0.0.1 only: other machines cannot reach this stack (HOST changes that)'
      : `listening on ${[...new Set(everywhere)].join(', ')} as configured (HOST, *_HOST)`,
  );
  say(
    `sign in  the admin side with ADMIN_TOKEN from ${secretsFile} (a bearer token, or the dashboard's form)`,
  );
  say(
    'tokens   npm run mint-token -- --user <id>  (a user token for the tray API, signed with the stack secret)',
  );
  say('events   npm run sign-and-send -- event.json  (signed with the stack secret of webhook "dev")');
  say('ready. Press Ctrl-C to stop.');
} catch (error) {
  say(`start-up failed: ${(error as Error).message}`);
  await stopAll(1);
}
