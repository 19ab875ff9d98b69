// The development stack behind `npm start` (scripts/dev-stack.ts runs it in a process group of its
// own): Redis, PostgreSQL, the receiver and the tray service (on the PostgreSQL storage adapter).
// The first SIGINT or SIGTERM drains and stops every child; a second makes the services exit at once;
// a service still running some seconds after its signal (its event loop blocked) is killed.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { devDataDir, devSecretsPath, loadOrCreateDevSecrets, shownPath } from './dev-secrets.ts';
import { FORCED_STOP_MS, serviceStopMs } from './dev-stack-stop.ts';
import { ensureDatabase } from './ensure-database.ts';
import { hasExited } from './has-exited.ts';
import { hostPort } from '../../shared/http/host-port.ts';
import { checkNoLeftoverServers } from './leftover-servers.ts';
import { listenError } from './listen-error.ts';
import {
  PasswordRefusedError,
  startPostgres,
  startRedis,
  type LocalServer,
  type SpawnedServer,
} from './local-servers.ts';
import { stackAddresses } from './stack-addresses.ts';
import { stackEnvPath, writeStackEnv } from './stack-env-file.ts';
import { stackExposure } from './stack-exposure.ts';
import { lockDataDir } from './stack-lock.ts';
import { shownClusterNodes, shownUrl } from './shown-url.ts';
import { checkDataDir } from './check-data-dir.ts';
import { staleStackUrls } from './stale-stack-urls.ts';
import { operatorEnvironment, shellsHost } from './operator-environment.ts';
import { metricsPortsProblem, ownRedisWanted, serviceEnvironments, stackDefaults } from './stack-settings.ts';
import { makeOwnerOnlyDir } from './owner-only-dir.ts';
import { waitHealthy } from './wait-healthy.ts';

const root = resolve(import.meta.dirname, '../..');
const dataDir = devDataDir();
const receiverPort = process.env.RECEIVER_PORT || '8080';
const trayPort = process.env.TRAY_PORT || '8081';
const adminPort = process.env.ADMIN_PORT || '8082';

const say = (line: string) => process.stdout.write(`[stack] ${line}\n`);
// Output read through a pipe whose reader is gone (`npm start | grep -m1 ready`): a line then fails
// with EPIPE, which unhandled would end the stack halfway and leave its servers running. The stack
// runs on without its output.
process.stdout.on('error', () => undefined);
process.stderr.on('error', () => undefined);
/** Every server process, from the moment it is spawned: a start interrupted midway stops them too. */
const servers: SpawnedServer[] = [];
/** The services (receiver, tray service), by name. */
const children: { name: string; process: ChildProcess }[] = [];
/** A service's pending SIGKILL, replaced when a second Ctrl-C shortens its wait. */
const killTimers = new Map<ChildProcess, NodeJS.Timeout>();
/** A service had to be killed: the stop was not clean, and the stack exits with 1. */
let killedAny = false;
let stopping: Promise<never> | undefined;
let releaseLock: (() => void) | undefined;
let wroteStackEnv = false;

/** Stops what was started, children first, and exits; a second call waits for the first. */
function stopAll(code: number): Promise<never> {
  stopping ??= stopEverything(code);
  return stopping;
}

async function stopEverything(code: number): Promise<never> {
  // A refusal before anything was started says its one line and nothing more.
  let started = servers.length > 0 || children.length > 0;
  if (started)
    say('stopping (the services finish what they are doing; Ctrl-C again to make them exit at once)');
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((done) => {
          if (hasExited(child.process)) return done();
          child.process.once('exit', () => {
            clearTimeout(killTimers.get(child.process));
            done();
          });
          signalService(child, serviceStopMs());
        }),
    ),
  );
  // One by one, newest first; a server spawned meanwhile by a start still under way is taken too.
  for (let server = servers.pop(); server !== undefined; server = servers.pop()) {
    started = true;
    await server.stop();
  }
  if (wroteStackEnv) rmSync(stackEnvPath(dataDir), { force: true });
  releaseLock?.();
  if (started) say('stopped');
  process.exit(killedAny ? 1 : code);
}

/**
 * SIGTERM, then SIGKILL if the service still runs `killAfterMs` later. A service whose event loop
 * is blocked cannot run its own shutdown deadline, and the stack would wait for it for ever.
 */
function signalService(child: { name: string; process: ChildProcess }, killAfterMs: number): void {
  child.process.kill('SIGTERM');
  clearTimeout(killTimers.get(child.process));
  killTimers.set(
    child.process,
    setTimeout(() => {
      if (hasExited(child.process)) return;
      say(`${child.name} did not exit within ${killAfterMs / 1000} s of SIGTERM; killing it`);
      killedAny = true;
      child.process.kill('SIGKILL');
    }, killAfterMs),
  );
}

function run(name: string, script: string, env: NodeJS.ProcessEnv): void {
  if (stopping) return;
  const child = spawn(process.execPath, [join(root, script)], {
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  child.once('exit', (code, signal) => {
    if (stopping) return;
    say(`${name} exited (${signal ?? code}); stopping the stack`);
    void stopAll(1);
  });
  children.push({ name, process: child });
}

/**
 * Each service's port, free before anything starts: a port another program holds would answer the
 * stack's health check for it (another stack's /healthz), and the service would then fail to listen.
 */
async function checkPortsFree(env: NodeJS.ProcessEnv): Promise<void> {
  const services = serviceEnvironments(env);
  const listeners = [
    { variable: 'RECEIVER_PORT', host: env.RECEIVER_HOST || env.HOST, port: receiverPort },
    { variable: 'TRAY_PORT', host: env.TRAY_HOST || env.HOST, port: trayPort },
    { variable: 'ADMIN_PORT', host: env.ADMIN_HOST, port: adminPort },
    { variable: 'METRICS_PORT', host: undefined, port: services.receiver.METRICS_PORT },
    {
      variable: 'METRICS_PORT (its next port, the tray service’s)',
      host: undefined,
      port: services.tray.METRICS_PORT,
    },
  ];
  for (const { variable, host = '127.0.0.1', port } of listeners) {
    if (port === undefined) continue;
    const number = Number(port);
    // A port that is no port is the service's to refuse, naming the variable.
    if (!Number.isInteger(number) || number < 1 || number > 65535) continue;
    const code = await listenError(host, number);
    if (code === undefined) continue;
    const at = hostPort(host, port);
    throw new Error(
      code === 'EADDRINUSE'
        ? `${variable}: ${at} is in use by another program (another npm start?): stop it, or set ${variable} to a free port`
        : `${variable}: cannot listen on ${at}: ${code}`,
    );
  }
}

let signals = 0;
function onSignal(): void {
  signals += 1;
  if (signals === 1) {
    void stopAll(0);
  } else if (signals === 2) {
    // Each service takes a second signal as "exit now"; the stack then stops its servers.
    say('second signal: the services exit at once');
    for (const child of children) if (!hasExited(child.process)) signalService(child, FORCED_STOP_MS);
  } else {
    process.exit(1);
  }
}
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
// npm start (scripts/dev-stack.ts) holds the other end of this channel: it closes when that process
// ends, also killed outright, which passes no signal on. The stack then stops as on Ctrl-C.
if (process.channel) {
  process.channel.unref();
  process.once('disconnect', () => {
    if (!stopping) say('npm start ended without stopping the stack; stopping it');
    if (signals === 0) onSignal();
  });
}
// A failure of the stack's own code still stops what it started, instead of leaving it running.
process.on('uncaughtException', (error) => {
  if (!stopping) say(`failed: ${error.message}`);
  void stopAll(1);
});

/**
 * A server of the stack's that ends while the stack runs (a PostgreSQL that shut down after a
 * PANIC): the services would run on without it, half dead. One line names it and its log, and the
 * stack stops.
 */
function supervise(server: LocalServer): void {
  const ended = () => {
    if (stopping) return;
    const { exitCode, signalCode } = server.process;
    say(
      `${server.name} exited (${signalCode ?? `code ${exitCode}`}) while the stack ran: see ${shownPath(server.log)}; stopping the stack`,
    );
    void stopAll(1);
  };
  if (hasExited(server.process)) ended();
  else server.process.once('exit', ended);
}

async function start(): Promise<void> {
  const exposeOn = process.env.STACK_EXPOSE || 'off';
  if (exposeOn !== 'on' && exposeOn !== 'off')
    throw new Error(`STACK_EXPOSE: expected on or off, got "${exposeOn}"`);
  checkDataDir(dataDir);
  makeOwnerOnlyDir(dataDir);
  // Another stack's directory is left as it is: the lock and the leftover check come before any
  // change to it (closing it to its group shut out the running stack's PostgreSQL, run as `postgres`).
  releaseLock = lockDataDir(dataDir);
  checkNoLeftoverServers(dataDir);
  // The servers' files and sockets: the owner's only (mkdir's mode does not apply to an old
  // directory); startPostgres lets its account through again.
  chmodSync(dataDir, 0o700);
  // This machine's secrets, made on the first run (scripts/lib/dev-secrets.ts): none is in the
  // repository. A data directory of an earlier version gets the servers' passwords added (and set below).
  const { secrets, created, added } = loadOrCreateDevSecrets(dataDir);
  const secretsFile = shownPath(devSecretsPath(dataDir));

  // A shell that read .data/stack.env of an earlier run still names that run's servers, stopped
  // with it: those are started again, not taken for servers of the operator's own.
  const stale = staleStackUrls(process.env, secrets);
  const operatorEnv = operatorEnvironment(process.env, stale);
  if (shellsHost(process.env))
    say(
      `HOST=${process.env.HOST ?? ''}: this machine's name, which tcsh sets in every environment; left out, the services listen on loopback (give an address in HOST to open them)`,
    );
  /** Development settings, only where the operator set nothing. */
  const devDefaults = stackDefaults(secrets, join(dataDir, 'receiver-spool'), operatorEnv);
  // Its Redis is started again only when the operator names no cluster of their own.
  const restarted = stale.filter((name) => name !== 'REDIS_URL' || ownRedisWanted(operatorEnv));
  const from = `this stack's own server of an earlier run (from ${shownPath(stackEnvPath(dataDir))})`;
  if (restarted.length > 0) say(`${restarted.join(' and ')}: ${from}; started again`);
  if (restarted.length < stale.length) say(`REDIS_URL: ${from}; left out (REDIS_CLUSTER_NODES names yours)`);
  const configured: NodeJS.ProcessEnv = {
    ...devDefaults,
    ...operatorEnv,
    RECEIVER_PORT: receiverPort,
    TRAY_PORT: trayPort,
    ADMIN_PORT: adminPort,
  };
  // Its defaults are for one developer's machine: opened to the network only when asked twice.
  const exposure = stackExposure(configured);
  if (exposure && exposeOn !== 'on') {
    const set = exposure.variables.map((name) => `${name}=${configured[name]}`).join(', ');
    throw new Error(
      `${set} would open to other machines, ${exposure.open}; ` +
        `set STACK_EXPOSE=on to start so anyway, or leave ${exposure.variables.join(', ')} unset`,
    );
  }
  const metricsProblem = metricsPortsProblem(configured, {
    RECEIVER_PORT: receiverPort,
    TRAY_PORT: trayPort,
    ADMIN_PORT: adminPort,
  });
  if (metricsProblem) throw new Error(metricsProblem);
  await checkPortsFree(configured);

  // The operator's own storage when they name one (DATABASE_URL, or MONGODB_URI for MongoDB);
  // otherwise a PostgreSQL of the stack's own.
  const ownStorage = Boolean(operatorEnv.DATABASE_URL || operatorEnv.MONGODB_URI);
  const onSpawn = (server: SpawnedServer) => servers.push(server);
  const [redis, postgres] = await Promise.all([
    // Both with a password from the secrets file: another local account can neither queue jobs
    // nor connect as PostgreSQL's superuser (docs/operations.md#security-model).
    !ownRedisWanted(operatorEnv)
      ? undefined
      : startRedis({
          dir: join(dataDir, 'redis'),
          persistent: true,
          password: secrets.REDIS_PASSWORD,
          onSpawn,
        }),
    // The user's data: fsync stays on (durability 'persistent').
    ownStorage
      ? undefined
      : startPostgres({
          dir: join(dataDir, 'postgres'),
          durability: 'persistent',
          password: secrets.POSTGRES_PASSWORD,
          onSpawn,
        }).catch((error: unknown) => {
          // The secrets file was deleted (as its own error says when damaged) or replaced, and made
          // anew: the cluster keeps the password it was made with, and would refuse every start.
          if (!(error instanceof PasswordRefusedError)) throw error;
          const postgresDir = shownPath(join(dataDir, 'postgres'));
          throw new Error(
            `${postgresDir} holds a database made with another password than ${secretsFile} gives (was that file deleted or replaced?): put the old file back, or delete ${postgresDir} to start with an empty database`,
          );
        }),
  ]);
  for (const server of [redis, postgres]) if (server) supervise(server);
  const env: NodeJS.ProcessEnv = {
    ...configured,
    REDIS_URL: redis?.url ?? operatorEnv.REDIS_URL,
    // The tray's tables live in a database of their own on the stack's server.
    ...(postgres ? { DATABASE_URL: await ensureDatabase(postgres.url, 'tray') } : {}),
  };
  // The ports change every run and the printed URLs hide the passwords: the operator scripts read
  // the servers' URLs from this file (only those the stack started: the operator has their own).
  const ownUrls = {
    ...(redis && env.REDIS_URL ? { REDIS_URL: env.REDIS_URL } : {}),
    ...(postgres && env.DATABASE_URL ? { DATABASE_URL: env.DATABASE_URL } : {}),
  };
  const stackEnv = Object.keys(ownUrls).length > 0 ? shownPath(writeStackEnv(dataDir, ownUrls)) : undefined;
  wroteStackEnv = stackEnv !== undefined;
  const at = stackAddresses(env);
  say(
    created
      ? `secrets  made for this machine in ${secretsFile} (mode 0600; kept for later runs)`
      : added.length > 0
        ? `secrets  ${secretsFile}: added ${added.join(', ')} and set them on the stack's servers`
        : `secrets  ${secretsFile}`,
  );
  const passwordIn = (name: string) => `password: ${name} in ${secretsFile}; `;
  say(
    env.REDIS_CLUSTER_NODES
      ? `redis    cluster ${shownClusterNodes(env.REDIS_CLUSTER_NODES)}`
      : `redis    ${shownUrl(env.REDIS_URL ?? '')}${redis ? ` (${passwordIn('REDIS_PASSWORD')}data in ${redis.dir})` : ''}`,
  );
  if (env.DATABASE_URL) {
    say(
      `postgres ${shownUrl(env.DATABASE_URL)}${postgres ? ` (${passwordIn('POSTGRES_PASSWORD')}data in ${postgres.dir})` : ''}`,
    );
  } else {
    say(`mongodb  ${shownUrl(env.MONGODB_URI ?? '')}`);
  }
  if (stackEnv) {
    say(
      `env      set -a; . ${stackEnv}; set +a  (their full URLs, for npm run replay, export-events, ...; 0600)`,
    );
  }
  const services = serviceEnvironments(env);
  run('receiver', 'receiver/main.ts', services.receiver);
  run('tray-service', 'tray-service/main.ts', services.tray);
  await Promise.all([
    waitHealthy(`${at.receiver}/healthz`, 60_000),
    waitHealthy(`${at.tray}/healthz`, 60_000),
  ]);
  // A service that failed meanwhile is stopping the stack: it is not ready.
  if (stopping) return;
  say(`receiver ${at.receiver}  (webhooks: POST ${new URL(at.webhooks).pathname}, /healthz, /readyz)`);
  say(`tray     ${at.tray}  (API, /healthz, /readyz; /metrics with METRICS_TOKEN or METRICS_PORT)`);
  if (services.receiver.METRICS_PORT !== undefined)
    say(
      `metrics  http://127.0.0.1:${services.receiver.METRICS_PORT}/metrics (receiver), http://127.0.0.1:${services.tray.METRICS_PORT}/metrics (tray)`,
    );
  say(`admin    ${at.admin}/admin/queues  (admin API and queue dashboard)`);
  say(`console  ${at.admin}/admin/console  (events console: stored events, traffic, moderation)`);
  if (env.TRAY_DEMO === 'on') say(`demo     ${at.tray}/demo  (a live tray; token: npm run mint-token)`);
  if (exposure) {
    say(`warning  open to other machines, ${exposure.open}`);
  } else {
    const everywhere = [env.HOST, env.RECEIVER_HOST, env.TRAY_HOST, env.ADMIN_HOST].filter(Boolean);
    say(
      everywhere.length === 0
        ? 'listening on 127.0.0.1 only: other machines cannot reach this stack (HOST with STACK_EXPOSE=on changes that)'
        : `listening on ${[...new Set(everywhere)].join(', ')} as configured (HOST, *_HOST)`,
    );
  }
  say(
    `sign in  the admin side with ADMIN_TOKEN from ${secretsFile} (a bearer token, or the dashboard's form)`,
  );
  say(
    'tokens   npm run mint-token -- --user <id>  (a user token for the tray API, signed with the stack secret)',
  );
  say(
    'events   npm run sign-and-send -- --now examples/events/comment.json  (signed with the stack secret of webhook "dev")',
  );
  say('ready. Press Ctrl-C to stop.');
}

try {
  await start();
} catch (error) {
  // A failure caused by stopping (a server stopped while it started) is no failure of its own.
  if (!stopping) {
    say(`start-up failed: ${(error as Error).message}`);
    await stopAll(1);
  }
}
