import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startRedis, type LocalServer } from '../../scripts/lib/local-servers.ts';
import { cleanEnv, runScript, startScript } from '../support/run-script.ts';
import { usePostgres } from '../support/use-postgres.ts';
import { migrate } from '../../tray-service/storage/postgres/migrate.ts';
import { testStack } from '../support/test-stack.ts';
import { waitFor } from '../support/wait-for.ts';
import { uniqueName } from '../support/suite-resources.ts';

const trayEnv = (extra: Record<string, string>) =>
  cleanEnv({
    TRAY_STORAGE: 'postgres',
    QUEUE_PREFIX: uniqueName('startup'),
    JWT_SECRET: 'startup-test-jwt-secret-32-characters-long',
    LOG_LEVEL: 'info',
    ...extra,
  });

/** A TCP forwarder on `port` to `target`: the database "comes up" on the port the tray waits for. */
function forward(port: number, target: number): Promise<Server> {
  const server = createServer((socket) => {
    const upstream = connect(target, '127.0.0.1');
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

const fatalLines = (stdout: string) => stdout.split('\n').filter((line) => line.includes('"level":60'));

// The docs say the processes stay up while dependencies are away: at start-up too, a dependency
// that does not answer yet is waited for (bounded), and one that cannot work stops start-up with
// one line naming its variable (docs/operations.md#before-exposing-a-port).
describe('tray-service/main.ts start-up', function () {
  this.timeout(60_000);
  const postgres = usePostgres();
  /** The tray's variables on the run's servers and a free port, with `extra`. */
  const onTheStack = async (extra: Record<string, string> = {}) =>
    trayEnv({
      DATABASE_URL: postgres.url,
      REDIS_URL: testStack().redisUrl,
      TRAY_PORT: String(await freePort()),
      ...extra,
    });
  let child: ChildProcess | undefined;
  const stopAfter: Array<{ close(): unknown }> = [];
  let dir = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'tray-startup-'));
  });
  afterEach(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    child = undefined;
    for (const server of stopAfter.splice(0)) await server.close();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  // The README: a bad value stops the process with one line naming the variable; the message
  // catalogues were loaded (and logged) before the token key was checked.
  it('a configuration error is its only line: nothing is loaded or logged before the whole configuration is checked', async () => {
    const env = await onTheStack();
    delete env.JWT_SECRET;
    const result = await runScript('tray-service/main.ts', [], env);
    expect(result.code).to.equal(1);
    const lines = `${result.stdout}${result.stderr}`.split('\n').filter((line) => line !== '');
    expect(lines).to.have.lengthOf(1);
    expect(lines[0]).to.match(/^Invalid configuration: JWT_SECRET: /);
  });

  // One environment file may serve every role: a worker started to try it must refuse the token
  // keys the API processes would then refuse, not start cleanly.
  it('a worker-only process checks the token variables that are set as the API does', async () => {
    const env = await onTheStack({
      TRAY_ROLE: 'worker',
      JWT_JWKS_URL: 'https://id.example.com/.well-known/jwks.json',
    });
    const result = await runScript('tray-service/main.ts', [], env);
    expect(result.code).to.equal(1);
    expect(`${result.stdout}${result.stderr}`).to.match(
      /Invalid configuration: JWT_SECRET, JWT_JWKS_URL: set exactly one of/,
    );
  });

  // One provider's key set signs tokens for its other apps and tenants too: without the issuer,
  // a token made for another of them with the same audience would act as a user here.
  it('warns when tokens come from a key set (JWKS) and no issuer is required', async () => {
    const env = await onTheStack({
      JWT_JWKS_URL: 'https://id.example.com/.well-known/jwks.json',
      JWT_AUDIENCE: 'tray',
    });
    delete env.JWT_SECRET;
    const started = await startScript('tray-service/main.ts', env, /JWT_JWKS_URL without JWT_ISSUER/);
    child = started.child;
    const line = started
      .output()
      .split('\n')
      .find((one) => one.includes('JWT_JWKS_URL without JWT_ISSUER'));
    expect(JSON.parse(line ?? '{}')).to.include({ level: 40, variable: 'JWT_ISSUER' });
  });

  it('waits for a database that is not up yet, naming DATABASE_URL, and starts once it answers', async () => {
    const port = await freePort();
    const url = new URL(postgres.url);
    const target = Number(url.port);
    url.port = String(port);
    const started = await startScript(
      'tray-service/main.ts',
      trayEnv({
        DATABASE_URL: url.toString(),
        REDIS_URL: testStack().redisUrl,
        TRAY_PORT: String(await freePort()),
      }),
      /does not answer at start-up/,
    );
    child = started.child;
    const warning = started
      .output()
      .split('\n')
      .find((line) => line.includes('does not answer'));
    expect(warning).to.include('"variable":"DATABASE_URL"');
    expect(warning).not.to.include(url.password || 'no-password-in-url');
    stopAfter.push(await forward(port, target));
    await waitFor(() => started.output().includes('tray service listening'), 20_000, 'the tray to listen');
    expect(started.output()).to.include('DATABASE_URL answers');
  });

  it('waits for a Redis that is not up yet, naming REDIS_URL, and starts once it answers', async () => {
    const port = await freePort();
    const started = await startScript(
      'tray-service/main.ts',
      trayEnv({
        DATABASE_URL: postgres.url,
        REDIS_URL: `redis://127.0.0.1:${port}`,
        TRAY_PORT: String(await freePort()),
      }),
      /REDIS_URL does not answer at start-up/,
    );
    child = started.child;
    const redis: LocalServer = await startRedis({ dir: join(dir, 'redis'), port });
    stopAfter.push({ close: () => redis.stop() });
    await waitFor(() => started.output().includes('tray service listening'), 20_000, 'the tray to listen');
  });

  it('stops at once, with one fatal line naming DATABASE_URL, when the database does not exist', async () => {
    const url = new URL(postgres.url);
    url.pathname = '/no_such_database';
    const result = await runScript(
      'tray-service/main.ts',
      [],
      trayEnv({
        DATABASE_URL: url.toString(),
        REDIS_URL: testStack().redisUrl,
        TRAY_PORT: String(await freePort()),
      }),
    );
    expect(result.code).to.equal(1);
    const fatal = fatalLines(result.stdout);
    expect(fatal).to.have.lengthOf(1);
    expect(fatal[0]).to.include('"variable":"DATABASE_URL"').and.to.include('does not exist');
    expect(result.stderr).not.to.match(/\n\s+at /);
  });

  // A database that accepts connections and never answers (a stopped or hung server) is waited for
  // like one that refuses them: the wait still ends, with the same fatal line.
  it('stops within the start-up wait (TRAY_STARTUP_WAIT_MS), with one fatal line naming DATABASE_URL, when the database accepts connections but never answers', async function () {
    // Two attempts of 5 s each (the first answer's bound) fit in the wait.
    const waitMs = 10_000;
    this.timeout(waitMs + 30_000);
    const held: Socket[] = [];
    let firstConnectionAt: number | undefined;
    const silent = createServer((socket) => {
      firstConnectionAt ??= performance.now();
      held.push(socket);
    });
    const port = await freePort();
    await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve));
    stopAfter.push({
      close: () => {
        held.forEach((socket) => socket.destroy());
        silent.close();
      },
    });
    const result = await runScript(
      'tray-service/main.ts',
      [],
      trayEnv({
        DATABASE_URL: `postgres://tray:secret@127.0.0.1:${port}/tray`,
        REDIS_URL: testStack().redisUrl,
        TRAY_PORT: String(await freePort()),
        TRAY_STARTUP_WAIT_MS: String(waitMs),
      }),
      waitMs + 20_000,
    );
    // From its first connection, so the process's own start (seconds on a loaded machine) is not
    // counted: the wait, then at most the last attempt's 5 s, and the exit.
    const elapsed = performance.now() - (firstConnectionAt ?? Number.NaN);
    expect(held.length, 'connections the tray opened').to.be.above(1);
    expect(result.code).to.equal(1);
    expect(elapsed, 'ms from the first connection to the exit').to.be.below(waitMs + 8_000);
    const fatal = fatalLines(result.stdout);
    expect(fatal).to.have.lengthOf(1);
    expect(fatal[0])
      .to.include('"variable":"DATABASE_URL"')
      .and.to.include('DATABASE_URL did not answer within 10 s of start-up');
    const warnings = result.stdout.split('\n').filter((line) => line.includes('does not answer at start-up'));
    expect(warnings, 'one warning for one lasting failure').to.have.lengthOf(1);
    expect(result.stdout).not.to.include('secret');
  });

  it('stops with one fatal line naming DATABASE_URL on SIGTERM while it waits', async () => {
    const started = await startScript(
      'tray-service/main.ts',
      trayEnv({
        DATABASE_URL: `postgres://tray@127.0.0.1:${await freePort()}/tray`,
        REDIS_URL: testStack().redisUrl,
        TRAY_PORT: String(await freePort()),
      }),
      /does not answer at start-up/,
    );
    child = started.child;
    const exited = new Promise<number | null>((resolve) => started.child.once('exit', resolve));
    started.child.kill('SIGTERM');
    expect(await exited).to.equal(1);
    const fatal = fatalLines(started.output());
    expect(fatal).to.have.lengthOf(1);
    expect(fatal[0]).to.include('"variable":"DATABASE_URL"');
  });
});

// Between the dependency waits (which end on a signal themselves) and the listeners, a SIGTERM met
// Node's default and ended the process by the signal: a worker's jobs cut mid-apply, no "shutting
// down" line, an exit the orchestrator reads as a crash. The shutdown is registered before the
// worker starts taking jobs now, and stops what has started.
describe('tray-service/main.ts signalled while it starts', function () {
  this.timeout(60_000);
  const postgres = usePostgres();

  it('shuts down as at any other time: one "shutting down" line, an exit code of its own', async () => {
    await migrate(postgres.pool);
    // The API's ban cache reads the stored bans at start-up (no list published under this
    // prefix yet): held here, start-up waits there, past the worker's start.
    const holder = await postgres.pool.connect();
    let child: ChildProcess | undefined;
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE user_bans IN ACCESS EXCLUSIVE MODE');
      const started = await startScript(
        'tray-service/main.ts',
        trayEnv({
          DATABASE_URL: postgres.url,
          REDIS_URL: testStack().redisUrl,
          TRAY_PORT: String(await freePort()),
          TRAY_ROLE: 'all',
          BAN_REDIS_PREFIX: uniqueName('signalled-bans'),
        }),
        /platform webhooks: only their events change the tray/,
      );
      child = started.child;
      await waitFor(
        async () => {
          const { rows } = await postgres.pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity
             WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          );
          return (rows[0]?.n ?? 0) > 0;
        },
        20_000,
        'start-up to wait for the stored bans',
      );
      const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
        started.child.once('exit', (code, signal) => resolve([code, signal])),
      );
      started.child.kill('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 300));
      await holder.query('ROLLBACK');
      const [code, signal] = await exited;
      expect(signal, started.output()).to.equal(null);
      expect(code, started.output()).to.be.a('number');
      expect(started.output()).to.include('"msg":"shutting down"');
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      holder.release();
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
