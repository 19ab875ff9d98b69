import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { ensureDatabase } from '../../scripts/lib/ensure-database.ts';
import { listenError } from '../../scripts/lib/listen-error.ts';
import { hs256Token } from '../../scripts/lib/hs256-token.ts';
import { FORCED_STOP_MS, serviceStopMs } from '../../scripts/lib/dev-stack-stop.ts';

const SERVICE_STOP_MS = serviceStopMs({});
import { freePort, startPostgres, type PostgresServer } from '../../scripts/lib/local-servers.ts';
import { testPostgres, testStack } from '../support/test-stack.ts';
import { sign, channelDidCreate } from '../receiver/support/signed-request.ts';
import { accepts, externalAddress } from '../support/external-address.ts';
import { childrenOf, commandOf, isRunning, processesIn, resume } from '../support/processes-in.ts';
import { cleanEnv, repoRoot, runScript, startCommand, startScript } from '../support/run-script.ts';
import { waitFor } from '../support/wait-for.ts';

/** The secrets the stack used to have written in the repository: they must open nothing now. */
const FORMER_JWT_SECRET = 'dev-only-secret-do-not-use-in-production';
const FORMER_WEBHOOK_SECRET = 'dev-secret';

/** What a Redis at `port` answers to a PING from a client that sent no password. */
function pingWithoutPassword(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('error', reject);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().trim());
    });
  });
}

/** Connects to PostgreSQL at `port` as its superuser with no password, as any local account could. */
async function connectWithoutPassword(port: number): Promise<void> {
  const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
  try {
    await client.connect();
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The ports of the stack's own Redis and PostgreSQL, from its banner. */
function serverPorts(output: string): { redis: number; postgres: number } {
  const port = (name: string) =>
    Number(new RegExp(`\\[stack\\] ${name} +\\w+://(?:[^@\\s]*@)?127\\.0\\.0\\.1:(\\d+)`).exec(output)?.[1]);
  return { redis: port('redis'), postgres: port('postgres') };
}

/** The modes of a data directory and of the folders in it, by path. */
function modesOf(dir: string): Record<string, string> {
  const modes: Record<string, string> = {};
  for (const path of [dir, join(dir, 'redis'), join(dir, 'postgres'), join(dir, 'postgres', 'data')]) {
    const { mode, uid, gid } = statSync(path);
    modes[path] = `${(mode & 0o7777).toString(8)} ${uid}:${gid}`;
  }
  return modes;
}

/** The uid and gid of an account, from `id`. */
function account(name: string): { uid: number; gid: number } {
  const id = (flag: string) => Number(spawnSync('id', [flag, name], { encoding: 'utf8' }).stdout.trim());
  return { uid: id('-u'), gid: id('-g') };
}

describe('npm start (scripts/dev-stack.ts)', function () {
  this.timeout(180_000);
  let dataDir: string;
  let firstDataDir: string;
  let ports: { receiver: number; tray: number; admin: number };
  let stack: { child: ChildProcess; output: () => string } | undefined;
  const url = (port: number, path: string) => `http://127.0.0.1:${port}${path}`;
  /** The environment of a start on the test's data directory and `on`'s ports; `env` wins. */
  const startEnv = (on: typeof ports, env: Record<string, string> = {}) =>
    cleanEnv({
      STACK_DATA_DIR: dataDir,
      RECEIVER_PORT: String(on.receiver),
      TRAY_PORT: String(on.tray),
      ADMIN_PORT: String(on.admin),
      ...env,
    });

  /** As a terminal runs it: in a process group of its own, so Ctrl-C is a SIGINT to that group. */
  const start = async (env: Record<string, string> = {}) => {
    stack = await startScript('scripts/dev-stack.ts', startEnv(ports, env), /ready\. Press Ctrl-C/, 120_000, {
      detached: true,
    });
    return stack;
  };
  const ctrlC = (child: ChildProcess) => process.kill(-child.pid!, 'SIGINT');
  const exitOf = (child: ChildProcess) =>
    new Promise<number | null>((resolve) => {
      if (child.exitCode !== null) resolve(child.exitCode);
      else child.once('exit', (code) => resolve(code));
    });
  const secrets = () =>
    JSON.parse(readFileSync(join(dataDir, 'dev-secrets.json'), 'utf8')) as Record<string, string>;
  /** The stack's stack.env, as the shell reads it. */
  const stackEnv = () => {
    const file = join(dataDir, 'stack.env');
    const sourced = spawnSync(
      'sh',
      ['-c', `set -a; . '${file}'; set +a; echo "$REDIS_URL"; echo "$DATABASE_URL"`],
      {
        encoding: 'utf8',
        env: cleanEnv(),
      },
    );
    const [REDIS_URL, DATABASE_URL] = sourced.stdout.split('\n');
    return { REDIS_URL, DATABASE_URL };
  };
  const tool = (script: string, args: string[]) =>
    runScript(script, args, cleanEnv({ STACK_DATA_DIR: dataDir, RECEIVER_PORT: String(ports.receiver) }));

  /**
   * Runs `npm start` to its end, as a start it should refuse; one that gets as far as `ready.`
   * anyway is stopped as Ctrl-C does, so a failing test leaves nothing running.
   */
  const startRefused = (env: Record<string, string> = {}) =>
    new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, ['scripts/dev-stack.ts'], {
        cwd: repoRoot,
        detached: true,
        env: startEnv(ports, env),
      });
      let output = '';
      let stopped = false;
      const collect = (chunk: Buffer) => {
        output += chunk.toString();
        if (!stopped && output.includes('ready. Press Ctrl-C')) {
          stopped = true;
          ctrlC(child);
        }
      };
      child.stdout.on('data', collect);
      child.stderr.on('data', collect);
      child.once('exit', (code) => resolve({ code, output }));
    });

  /** Stops a stack still running (one a test left, when tests are picked with --grep). */
  const stopRunning = async () => {
    if (stack && stack.child.exitCode === null) {
      const exited = exitOf(stack.child);
      ctrlC(stack.child);
      await exited;
    }
  };

  /** Stops a running stack as Ctrl-C does, and removes its data directory. */
  const stopAndRemove = async () => {
    if (stack && stack.child.exitCode === null) {
      const exited = exitOf(stack.child);
      ctrlC(stack.child);
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  };

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'stack-test-'));
    firstDataDir = dataDir;
    ports = { receiver: await freePort(), tray: await freePort(), admin: await freePort() };
  });
  after(async () => {
    if (stack && stack.child.exitCode === null) {
      process.kill(-stack.child.pid!, 'SIGKILL');
    }
    rmSync(firstDataDir, { recursive: true, force: true });
  });

  describe('first run', () => {
    before(() => start());

    it('starts its own servers and both services and reports ready', async () => {
      const tray = await fetch(url(ports.tray, '/healthz'));
      expect((await fetch(url(ports.receiver, '/healthz'))).status).to.equal(200);
      expect(tray.status).to.equal(200);
      expect(await tray.json()).to.deep.equal({ status: 'ok' });
      // A PostgreSQL cluster under the stack's data directory, and the tray on its PostgreSQL adapter
      // (no FerretDB: the stack runs the default storage).
      expect(existsSync(join(dataDir, 'postgres', 'data', 'PG_VERSION'))).to.equal(true);
      const ready = await fetch(url(ports.tray, '/readyz'));
      expect(ready.status).to.equal(200);
      expect(((await ready.json()) as { checks: Record<string, unknown> }).checks.storage).to.deep.equal({
        ok: true,
        detail: { engine: 'postgres' },
      });
      expect(stack!.output()).to.match(
        /\[stack\] postgres postgres:\/\/postgres:\*\*\*\*@127\.0\.0\.1:\d+\/tray \(password: POSTGRES_PASSWORD in /,
      );
      expect(stack!.output()).to.match(
        /\[stack\] redis {4}redis:\/\/:\*\*\*\*@127\.0\.0\.1:\d+ \(password: REDIS_PASSWORD in /,
      );
      expect(stack!.output()).not.to.include('ferretdb');
      // The quick start's demo page is on in the development stack (off by default elsewhere).
      const demo = await fetch(url(ports.tray, '/demo'));
      expect(demo.status).to.equal(200);
      expect(await demo.text()).to.include('<script type="module" src="/demo/demo.js"');
    });

    it('listens on loopback only, and says so', async function () {
      expect(stack!.output()).to.include(`receiver http://127.0.0.1:${ports.receiver}`);
      expect(stack!.output()).to.include('listening on 127.0.0.1 only');
      const external = externalAddress();
      for (const port of Object.values(ports)) expect(await accepts(external, port)).to.equal(false);
    });

    it('makes its own secrets in a 0600 file, and prints how to sign in and mint a token', () => {
      const file = join(dataDir, 'dev-secrets.json');
      expect(statSync(file).mode & 0o777).to.equal(0o600);
      for (const value of Object.values(secrets())) expect(value).to.have.length.of.at.least(43);
      const output = stack!.output();
      expect(output).to.include(`secrets  made for this machine in ${file}`);
      expect(output).to.include(`admin    http://127.0.0.1:${ports.admin}/admin/queues`);
      expect(output).to.include(`console  http://127.0.0.1:${ports.admin}/admin/console`);
      expect(output).to.include('sign in  the admin side with ADMIN_TOKEN from');
      expect(output).to.include('npm run mint-token -- --user <id>');
      for (const value of Object.values(secrets())) expect(output).not.to.include(value);
    });

    it('keeps its Redis and PostgreSQL closed to a local account without their generated passwords', async () => {
      expect(secrets()).to.include.keys('REDIS_PASSWORD', 'POSTGRES_PASSWORD');
      const { redis, postgres } = serverPorts(stack!.output());
      expect(await pingWithoutPassword(redis)).to.match(/^-NOAUTH/);
      await expect(connectWithoutPassword(postgres)).to.be.rejectedWith(/password/);
    });

    it('writes its servers’ full URLs to stack.env (0600), from which the operator scripts reach them', async () => {
      const file = join(dataDir, 'stack.env');
      expect(statSync(file).mode & 0o777).to.equal(0o600);
      expect(stack!.output()).to.include(`env      set -a; . ${file}; set +a`);
      const { redis, postgres } = serverPorts(stack!.output());
      const { REDIS_PASSWORD, POSTGRES_PASSWORD } = secrets();
      const sourced = spawnSync(
        'sh',
        ['-c', `set -a; . '${file}'; set +a; echo "$REDIS_URL $DATABASE_URL"`],
        {
          encoding: 'utf8',
          env: cleanEnv(),
        },
      );
      expect(sourced.stdout.trim()).to.equal(
        `redis://:${REDIS_PASSWORD}@127.0.0.1:${redis} postgres://postgres:${POSTGRES_PASSWORD}@127.0.0.1:${postgres}/tray`,
      );
      // As docs/operations.md shows it: the shell reads the file, the script its variables.
      const replay = spawnSync(
        'sh',
        ['-c', `set -a; . '${file}'; set +a; exec "${process.execPath}" scripts/replay.ts failed --dry-run`],
        { cwd: repoRoot, encoding: 'utf8', env: cleanEnv() },
      );
      expect(replay.status, replay.stderr).to.equal(0);
    });

    it('keeps its data to its owner: the directory 0700 (as root, 0710 for group postgres only), logs 0600', () => {
      const root = process.getuid?.() === 0;
      const top = statSync(dataDir);
      expect((top.mode & 0o777).toString(8)).to.equal(root ? '710' : '700');
      if (root) expect(top.gid).to.equal(account('postgres').gid);
      expect((statSync(join(dataDir, 'postgres')).mode & 0o777).toString(8)).to.equal('700');
      expect((statSync(join(dataDir, 'redis')).mode & 0o777).toString(8)).to.equal('700');
      for (const log of ['postgres/postgres.log', 'redis/redis.log'])
        expect((statSync(join(dataDir, log)).mode & 0o777).toString(8), log).to.equal('600');
    });

    it('refuses a second npm start on the same data directory with one line, and starts nothing', async () => {
      const redisBefore = processesIn(join(dataDir, 'redis'));
      const modesBefore = modesOf(dataDir);
      const other = { receiver: await freePort(), tray: await freePort(), admin: await freePort() };
      const second = await runScript('scripts/dev-stack.ts', [], startEnv(other), 60_000);
      expect(second.code).to.equal(1);
      expect(second.stdout).to.match(
        /^\[stack\] start-up failed: \S+ is in use by another npm start \(pid \d+\): stop that one first, or set STACK_DATA_DIR to another directory\n$/,
      );
      expect(second.stdout).to.include(dataDir);
      expect(processesIn(join(dataDir, 'redis'))).to.deep.equal(redisBefore);
      expect((await fetch(url(ports.tray, '/healthz'))).status).to.equal(200);
      // The refused start changed nothing in the running stack's data directory: a mode taken from
      // its PostgreSQL (as root, the account `postgres` passes through it) made the first stack's
      // next checkpoint fail to open global/pg_control, and its PostgreSQL shut down.
      expect(modesOf(dataDir)).to.deep.equal(modesBefore);
      const client = new pg.Client({ connectionString: stackEnv().DATABASE_URL });
      await client.connect();
      try {
        await client.query('CHECKPOINT');
      } finally {
        await client.end();
      }
    });

    it('opens nothing to the secrets once written in the repository', async () => {
      const body = channelDidCreate('stack-former-secret');
      const webhook = await fetch(url(ports.receiver, '/webhooks'), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-service-signature': sign(body, FORMER_WEBHOOK_SECRET),
        },
        body,
      });
      expect(webhook.status).to.equal(401);
      const token = await hs256Token(FORMER_JWT_SECRET, 'mallory');
      const tray = await fetch(url(ports.tray, '/notifications/v3'), {
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(tray.status).to.equal(401);
    });

    it('takes tokens from mint-token and events from sign-and-send with no secret in their environment', async () => {
      const minted = await tool('scripts/mint-token.ts', ['--user', 'u-ana']);
      expect(minted.code).to.equal(0);
      const tray = await fetch(url(ports.tray, '/notifications/v3'), {
        headers: { Authorization: `Bearer ${minted.stdout.trim()}` },
      });
      expect(tray.status).to.equal(200);
      // The sample the stack's own `events` line names: Cid's comment on Ana's post, dated now (as
      // written, it would show in no tray 90 days after its date).
      expect(stack!.output()).to.include(
        'events   npm run sign-and-send -- --now examples/events/comment.json',
      );
      const sent = await tool('scripts/sign-and-send.ts', ['--now', 'examples/events/comment.json']);
      expect(sent.stdout.trim()).to.equal('200 {}');
      await waitFor(
        async () => {
          const history = await fetch(url(ports.tray, '/notifications/v3/history'), {
            headers: { Authorization: `Bearer ${minted.stdout.trim()}` },
          });
          const page = (await history.json()) as { data: { v_tarid_uid: string }[] };
          return page.data.some((record) => record.v_tarid_uid === 'comment_p-100_u-ana');
        },
        20_000,
        "the sample comment in u-ana's tray",
      );
    });

    it('serves the admin side on its own port to ADMIN_TOKEN only', async () => {
      const admin = { Authorization: `Bearer ${secrets().ADMIN_TOKEN}` };
      expect((await fetch(url(ports.admin, '/admin/events'), { headers: admin })).status).to.equal(200);
      expect((await fetch(url(ports.tray, '/admin/events'), { headers: admin })).status).to.equal(404);
      const minted = await tool('scripts/mint-token.ts', ['--user', 'u-ana']);
      const user = { Authorization: `Bearer ${minted.stdout.trim()}` };
      expect((await fetch(url(ports.admin, '/admin/events'), { headers: user })).status).to.equal(401);
    });

    it('on Ctrl-C, both services drain once (no "exit now") and everything stops with code 0', async () => {
      const { child, output } = stack!;
      const exited = exitOf(child);
      ctrlC(child);
      expect(await exited).to.equal(0);
      expect(await accepts('127.0.0.1', ports.receiver)).to.equal(false);
      expect(await accepts('127.0.0.1', ports.tray)).to.equal(false);
      const lines = output().split('\n');
      for (const name of ['receiver', 'tray-service']) {
        const own = lines.filter((line) => line.includes(`"name":"${name}"`));
        expect(own.filter((line) => line.includes('"msg":"shutting down"'))).to.have.lengthOf(1);
        expect(own.filter((line) => line.includes('"msg":"stopped"'))).to.have.lengthOf(1);
      }
      expect(output()).not.to.include('second signal');
      expect(output()).to.include('[stack] stopped');
      // Nothing left behind: no server, no lock, no URLs of servers that are gone.
      expect(processesIn(dataDir)).to.deep.equal([]);
      expect(existsSync(join(dataDir, 'stack.env'))).to.equal(false);
      expect(existsSync(join(dataDir, 'stack.pid'))).to.equal(false);
    });
  });

  describe('a later run on the same data directory', () => {
    let firstSecrets: Record<string, string>;
    let tokenFromFirstRun: string;
    before(async () => {
      firstSecrets = secrets();
      tokenFromFirstRun = await hs256Token(firstSecrets.JWT_SECRET!, 'u-ana');
      await start({ WEBHOOK_PATH: '/hooks/platform' });
    });

    it('names the webhook path it was given, and takes webhooks there', async () => {
      expect(stack!.output()).to.include('(webhooks: POST /hooks/platform, /healthz, /readyz)');
      // Unsigned: refused by the webhook handler (401), not unknown to the receiver (404).
      const unsigned = await fetch(url(ports.receiver, '/hooks/platform'), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{}',
      });
      expect(unsigned.status).to.equal(401);
    });

    it('reuses the secrets, so earlier tokens still work', async () => {
      expect(secrets()).to.deep.equal(firstSecrets);
      expect(stack!.output()).not.to.include('secrets  made for this machine');
      const tray = await fetch(url(ports.tray, '/notifications/v3'), {
        headers: { Authorization: `Bearer ${tokenFromFirstRun}` },
      });
      expect(tray.status).to.equal(200);
    });

    it('on a second Ctrl-C, the services exit at once and the stack still stops its servers', async () => {
      const { child, output } = stack!;
      const exited = exitOf(child);
      const started = Date.now();
      // An idle stack can stop within the wait below, before the second Ctrl-C: the tray is held
      // (as a busy event loop would be) until the stack has taken it, then let go.
      const inner = Number(readFileSync(join(dataDir, 'stack.pid'), 'utf8').trim());
      const [tray] = childrenOf(inner).filter((pid) => commandOf(pid).includes('tray-service/main.ts'));
      expect(tray, 'the tray service').to.be.a('number');
      process.kill(tray!, 'SIGSTOP');
      try {
        ctrlC(child);
        // Later than npm's copy of the first would come (the stack takes signals that close as one).
        await new Promise((resolve) => setTimeout(resolve, 600));
        ctrlC(child);
        await waitFor(
          () => output().includes('[stack] second signal: the services exit at once'),
          10_000,
          'the stack to take the second Ctrl-C',
        );
      } finally {
        resume(tray!);
      }
      expect(await exited).to.equal(0);
      expect(Date.now() - started).to.be.below(15_000);
      expect(output()).to.include('[stack] second signal: the services exit at once');
      expect(output()).to.include('[stack] stopped');
      expect(await accepts('127.0.0.1', ports.tray)).to.equal(false);
    });

    // A damaged secrets file says to delete it; the next start made new secrets, and its PostgreSQL,
    // made with the old password, refused the new one on every start with nothing saying why.
    it('without its secrets file beside a database made with them: says so, and how to go on', async () => {
      const file = join(dataDir, 'dev-secrets.json');
      const kept = readFileSync(file);
      rmSync(file);
      try {
        const { code, output } = await startRefused();
        expect(code).to.equal(1);
        expect(output).not.to.include('ready.');
        const postgresDir = join(dataDir, 'postgres');
        expect(output).to.include(
          `[stack] start-up failed: ${postgresDir} holds a database made with another password than ${file} gives (was that file deleted or replaced?): put the old file back, or delete ${postgresDir} to start with an empty database\n`,
        );
      } finally {
        writeFileSync(file, kept, { mode: 0o600 });
      }
    });
  });

  // The stack's token secret was set beside the operator's own key (two keys: the tray refused to
  // start), and both services listened on METRICS_PORT (the second to start exited).
  describe('with the operator’s own token key and METRICS_PORT', () => {
    let keyFile: string;
    let metricsPort: number;
    before(async () => {
      await stopRunning();
      const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      keyFile = join(mkdtempSync(join(tmpdir(), 'operator-key-')), 'key.pem');
      writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
      // Two free ports in a row: the receiver's and the tray service's.
      do metricsPort = await freePort();
      while ((await listenError('127.0.0.1', metricsPort + 1)) !== undefined);
      await start({
        JWT_PUBLIC_KEY: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
        METRICS_PORT: String(metricsPort),
      });
    });
    after(async () => {
      await stopRunning();
      rmSync(dirname(keyFile), { recursive: true, force: true });
    });

    it('verifies tokens with that key only', async () => {
      const minted = await tool('scripts/mint-token.ts', [
        '--user',
        'u-ana',
        '--alg',
        'ES256',
        '--private-key',
        keyFile,
      ]);
      expect(minted.code, minted.stderr).to.equal(0);
      const own = await fetch(url(ports.tray, '/notifications/v3'), {
        headers: { Authorization: `Bearer ${minted.stdout.trim()}` },
      });
      expect(own.status).to.equal(200);
      const stackSigned = await fetch(url(ports.tray, '/notifications/v3'), {
        headers: { Authorization: `Bearer ${await hs256Token(secrets().JWT_SECRET!, 'u-ana')}` },
      });
      expect(stackSigned.status).to.equal(401);
    });

    it('serves the receiver’s metrics on METRICS_PORT and the tray service’s on the next port, and says so', async () => {
      const receiver = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(receiver.status).to.equal(200);
      expect(await receiver.text()).to.include('webhook_');
      const tray = await fetch(`http://127.0.0.1:${metricsPort + 1}/metrics`);
      expect(tray.status).to.equal(200);
      expect(await tray.text()).to.include('tray_');
      expect(stack!.output()).to.include(
        `metrics  http://127.0.0.1:${metricsPort}/metrics (receiver), http://127.0.0.1:${metricsPort + 1}/metrics (tray)`,
      );
    });
  });

  // npm passes a signal on to the command it runs, which the terminal signalled too. Where npm's
  // shell execs the command (bash, /bin/sh on Fedora or macOS) the stack gets each Ctrl-C twice;
  // where it does not (dash, Debian's /bin/sh), the shell waits.
  describe('through npm start, whatever shell runs it', () => {
    before(stopRunning);

    // The two copies of one Ctrl-C may also merge in the kernel, before the stack sees them: three
    // rounds with bash, so a stack that takes them as two fails here.
    for (const [shell, rounds] of [
      ['/bin/bash', 3],
      ['/bin/sh', 1],
    ] as const) {
      it(`with ${shell}: one Ctrl-C drains once, and npm returns only once the stack has stopped (${rounds} rounds)`, async () => {
        for (let round = 1; round <= rounds; round += 1) await ctrlCThroughNpm(shell);
      });
    }

    const ctrlCThroughNpm = async (shell: string) => {
      const { child, output } = await startCommand(
        'npm',
        ['start', '--ignore-scripts', `--script-shell=${shell}`],
        startEnv(ports),
        /ready\. Press Ctrl-C/,
        120_000,
        { detached: true },
      );
      const exited = exitOf(child);
      ctrlC(child);
      await exited;
      expect(output()).to.include('[stack] stopped');
      expect(output()).not.to.include('second signal');
      expect(await accepts('127.0.0.1', ports.tray)).to.equal(false);
    };
  });

  describe('when its own PostgreSQL exits while it runs', () => {
    before(async () => {
      await stopRunning();
      dataDir = mkdtempSync(join(tmpdir(), 'stack-test-died-'));
      await start();
    });
    after(stopAndRemove);

    it('says so in one line naming it and its log, stops everything, and exits with code 1', async () => {
      const { child, output } = stack!;
      const exited = exitOf(child);
      const postmaster = Number(
        readFileSync(join(dataDir, 'postgres', 'data', 'postmaster.pid'), 'utf8').split('\n')[0],
      );
      // A fast shutdown, as PostgreSQL does itself after a PANIC.
      process.kill(postmaster, 'SIGINT');
      await waitFor(() => child.exitCode !== null, 60_000, 'the stack to stop');
      expect(await exited).to.equal(1);
      const log = join(dataDir, 'postgres', 'postgres.log');
      expect(
        output()
          .split('\n')
          .filter((line) => line.includes('[stack] postgres exited')),
      ).to.deep.equal([
        `[stack] postgres exited (code 0) while the stack ran: see ${log}; stopping the stack`,
      ]);
      expect(output()).to.include('[stack] stopped');
      expect(processesIn(dataDir)).to.deep.equal([]);
      expect(existsSync(join(dataDir, 'stack.env'))).to.equal(false);
      expect(existsSync(join(dataDir, 'stack.pid'))).to.equal(false);
    });
  });

  // `npm start | grep -m1 'ready\.'`: the reader is gone before Ctrl-C, and the stack's next line
  // meets a closed pipe (EPIPE), which killed it halfway through stopping its servers.
  describe('with its output piped into a reader that goes away', () => {
    before(async () => {
      await stopRunning();
      dataDir = mkdtempSync(join(tmpdir(), 'stack-test-pipe-'));
    });
    after(stopAndRemove);

    it('on Ctrl-C still stops every process it started and removes stack.pid and stack.env', async () => {
      const child = spawn(process.execPath, ['scripts/dev-stack.ts'], {
        cwd: repoRoot,
        detached: true,
        // stderr is read to the end: a run that hangs says where (it once did, on a loaded machine).
        stdio: ['ignore', 'pipe', 'pipe'],
        env: startEnv(ports),
      });
      let output = '';
      let errors = '';
      child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()));
      const shown = () => `${output}\n--- stderr ---\n${errors}`;
      stack = { child, output: () => output };
      const exited = exitOf(child);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`not ready within 120 s:\n${shown()}`)), 120_000);
        child.stdout!.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          if (output.includes('ready. Press Ctrl-C')) {
            clearTimeout(timer);
            resolve();
          }
        });
        child.once('exit', () => {
          clearTimeout(timer);
          reject(new Error(`the stack exited before ready:\n${shown()}`));
        });
      });
      // The reader quits: the read end of the pipe closes.
      child.stdout!.destroy();
      ctrlC(child);
      const code = await Promise.race([
        exited,
        new Promise((resolve) => setTimeout(resolve, 60_000, 'running')),
      ]);
      expect(code, shown()).not.to.equal('running');
      await waitFor(() => processesIn(dataDir).length === 0, 30_000, 'every process of the stack to end');
      expect(existsSync(join(dataDir, 'stack.env'))).to.equal(false);
      expect(existsSync(join(dataDir, 'stack.pid'))).to.equal(false);
    });
  });

  // The stack runs in a process group of its own, which only npm start passes signals to: killed
  // outright (SIGKILL, the OOM killer), it passed nothing on, and Redis, PostgreSQL and both
  // services ran on, holding the data directory's lock against the next npm start.
  describe('when npm start itself is killed outright', () => {
    before(async () => {
      await stopRunning();
      dataDir = mkdtempSync(join(tmpdir(), 'stack-test-killed-'));
    });
    after(async () => {
      for (const pid of processesIn(dataDir)) process.kill(pid, 'SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('stops every process it started, and removes stack.pid and stack.env', async () => {
      const { child } = await start();
      const inner = Number(readFileSync(join(dataDir, 'stack.pid'), 'utf8').trim());
      expect(isRunning(inner), 'the stack runs').to.equal(true);
      child.kill('SIGKILL');
      stack = undefined;
      await waitFor(
        () => !isRunning(inner) && processesIn(dataDir).length === 0,
        60_000,
        'every process of the stack to end',
      );
      expect(existsSync(join(dataDir, 'stack.env'))).to.equal(false);
      expect(existsSync(join(dataDir, 'stack.pid'))).to.equal(false);
    });
  });

  // A service whose event loop never comes back (here: stopped with SIGSTOP) cannot run its own
  // shutdown deadline: the stack waited for it without end, and a second Ctrl-C did not help.
  describe('with a service that does not answer its signal', () => {
    let frozen: number[] = [];
    beforeEach(async () => {
      await stopRunning();
      dataDir = mkdtempSync(join(tmpdir(), 'stack-test-frozen-'));
      await start();
    });
    afterEach(async () => {
      for (const pid of frozen) resume(pid);
      frozen = [];
      await stopAndRemove();
    });

    /** Stops `script`'s process (as a blocked event loop would be) and returns its pid. */
    const freeze = (script: string) => {
      const inner = Number(readFileSync(join(dataDir, 'stack.pid'), 'utf8').trim());
      const [pid] = childrenOf(inner).filter((child) => commandOf(child).includes(script));
      expect(pid, script).to.be.a('number');
      process.kill(pid!, 'SIGSTOP');
      frozen.push(pid!);
      return pid!;
    };

    it('kills it some seconds after Ctrl-C, says so, and stops everything else', async () => {
      const { child, output } = stack!;
      const exited = exitOf(child);
      const receiver = freeze('receiver/main.ts');
      ctrlC(child);
      expect(await exited).to.equal(1);
      expect(output()).to.include(
        `[stack] receiver did not exit within ${SERVICE_STOP_MS / 1000} s of SIGTERM; killing it`,
      );
      expect(output()).to.include('[stack] stopped');
      expect(isRunning(receiver)).to.equal(false);
      await waitFor(() => processesIn(dataDir).length === 0, 30_000, 'every process of the stack to end');
      expect(existsSync(join(dataDir, 'stack.pid'))).to.equal(false);
    });

    it('kills it at once after a second Ctrl-C', async () => {
      const { child, output } = stack!;
      const exited = exitOf(child);
      const tray = freeze('tray-service/main.ts');
      ctrlC(child);
      await waitFor(() => output().includes('[stack] stopping'), 10_000, 'the stack to start stopping');
      // Later than npm's copy of the first would come (the stack takes signals that close as one).
      await new Promise((resolve) => setTimeout(resolve, 600));
      ctrlC(child);
      expect(await exited).to.equal(1);
      expect(output()).to.include(
        `[stack] tray-service did not exit within ${FORCED_STOP_MS / 1000} s of SIGTERM; killing it`,
      );
      expect(output()).not.to.include(`within ${SERVICE_STOP_MS / 1000} s`);
      expect(isRunning(tray)).to.equal(false);
      await waitFor(() => processesIn(dataDir).length === 0, 30_000, 'every process of the stack to end');
    });
  });

  describe('when the stack process itself is killed', () => {
    before(async () => {
      await stopRunning();
      dataDir = mkdtempSync(join(tmpdir(), 'stack-test-killed-'));
      await start();
    });
    after(stopAndRemove);

    it('npm start stops the servers and services it left running', async () => {
      const { child } = stack!;
      const exited = exitOf(child);
      // The process behind `npm start`'s own, which holds the lock.
      const inner = Number(readFileSync(join(dataDir, 'stack.pid'), 'utf8').trim());
      process.kill(inner, 'SIGKILL');
      expect(await exited).to.equal(1);
      await waitFor(() => processesIn(dataDir).length === 0, 30_000, 'every process of the stack to end');
      expect(await accepts('127.0.0.1', ports.tray)).to.equal(false);
    });
  });

  // Its SIGTERM reached a service whose event loop does not run (here stopped): that one ran on,
  // with the port and the data directory, and the next start refused.
  describe('when the stack process itself is killed while a service does not run', () => {
    let frozen: number | undefined;
    before(async () => {
      await stopRunning();
      dataDir = mkdtempSync(join(tmpdir(), 'stack-test-killed-frozen-'));
      await start();
    });
    after(async () => {
      if (frozen !== undefined && isRunning(frozen)) process.kill(frozen, 'SIGCONT');
      await stopAndRemove();
    });

    it('npm start kills what is still running some seconds after its SIGTERM, and says so', async () => {
      const { child, output } = stack!;
      const exited = exitOf(child);
      const inner = Number(readFileSync(join(dataDir, 'stack.pid'), 'utf8').trim());
      [frozen] = childrenOf(inner).filter((pid) => commandOf(pid).includes('tray-service/main.ts'));
      expect(frozen).to.be.a('number');
      process.kill(frozen!, 'SIGSTOP');
      process.kill(inner, 'SIGKILL');
      expect(await exited).to.equal(1);
      expect(output()).to.include(
        `[stack] processes of the stack still running ${SERVICE_STOP_MS / 1000} s after SIGTERM; killing them`,
      );
      await waitFor(() => processesIn(dataDir).length === 0, 30_000, 'every process of the stack to end');
      // SIGKILL is sent as npm start exits; the kernel ends the process right after.
      await waitFor(() => !isRunning(frozen!), 5_000, 'the stopped tray service to end');
      expect(await accepts('127.0.0.1', ports.tray)).to.equal(false);
    });
  });

  // It takes none: `npm start -- --help` started the whole stack, and so did any argument.
  describe('with arguments', () => {
    it('--help prints how it is configured and starts nothing; any other argument is refused', async () => {
      const fresh = join(tmpdir(), `stack-test-args-${process.pid}`);
      const env = cleanEnv({ STACK_DATA_DIR: fresh });
      const help = await runScript('scripts/dev-stack.ts', ['--help'], env, 30_000);
      expect(help.code).to.equal(0);
      expect(help.stdout).to.match(/^Usage: npm start\n/);
      expect(help.stdout).to.include('STACK_DATA_DIR');
      const other = await runScript('scripts/dev-stack.ts', ['--port', '9000'], env, 30_000);
      expect(other.code).to.equal(2);
      expect(other.stderr).to.match(
        /^npm start takes no arguments \(got --port\): set environment variables instead/,
      );
      expect(existsSync(fresh), 'a data directory made').to.equal(false);
    });
  });

  describe('a start that cannot finish', () => {
    beforeEach(() => {
      dataDir = mkdtempSync(join(tmpdir(), 'stack-test-fail-'));
    });
    afterEach(stopAndRemove);

    // Its /healthz answered for the stack's receiver, which then met EADDRINUSE after `ready.`.
    it('with a port taken by another program: one line naming the variable, before starting anything', async () => {
      const other = createServer((_req, res) => res.end('{"status":"ok"}'));
      await new Promise<void>((resolve) => other.listen(ports.receiver, '127.0.0.1', resolve));
      try {
        const { code, output } = await startRefused();
        expect(code).to.equal(1);
        expect(output).not.to.include('ready.');
        expect(output).to.equal(
          `[stack] start-up failed: RECEIVER_PORT: 127.0.0.1:${ports.receiver} is in use by another program (another npm start?): stop it, or set RECEIVER_PORT to a free port\n`,
        );
        expect(existsSync(join(dataDir, 'redis'))).to.equal(false);
      } finally {
        await new Promise((resolve) => other.close(resolve));
      }
    });

    // The stack closes its directory to its owner: /tmp, say, would be shut to every other account.
    it('with STACK_DATA_DIR a folder of other files: one line naming it, and its mode left as it was', async () => {
      writeFileSync(join(dataDir, 'notes.txt'), 'not the stack’s');
      chmodSync(dataDir, 0o755);
      const { code, output } = await startRefused();
      expect(code).to.equal(1);
      expect(output).to.equal(
        `[stack] start-up failed: STACK_DATA_DIR: ${dataDir} holds files of its own (notes.txt) and is not a stack's data directory; name a new or empty one, as the stack makes it its owner's only\n`,
      );
      expect(statSync(dataDir).mode & 0o777).to.equal(0o755);
      expect(readdirSync(dataDir)).to.deep.equal(['notes.txt']);
    });

    it('on Ctrl-C while its servers start, stops every one it started', async () => {
      const child = spawn(process.execPath, ['scripts/dev-stack.ts'], {
        cwd: repoRoot,
        detached: true,
        stdio: 'ignore',
        env: startEnv(ports),
      });
      stack = { child, output: () => '' };
      const exited = exitOf(child);
      // Redis is up within a moment; PostgreSQL is still making its cluster.
      await waitFor(() => processesIn(join(dataDir, 'redis')).length > 0, 30_000, 'redis-server to start');
      ctrlC(child);
      expect(await exited).to.equal(0);
      expect(processesIn(dataDir)).to.deep.equal([]);
    });
  });

  describe('after a stack that was killed, or a PostgreSQL that cannot start', () => {
    let leftover: PostgresServer | undefined;
    before(async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'stack-test-left-'));
      const cluster = await startPostgres({ dir: join(dataDir, 'postgres'), durability: 'persistent' });
      await cluster.stop();
    });
    after(async () => {
      await leftover?.stop();
      await stopAndRemove();
    });
    const conf = () => join(dataDir, 'postgres', 'data', 'postgresql.conf');

    it('PostgreSQL fails: prints its reason from postgres.log and the log’s path, and stops Redis', async () => {
      const good = readFileSync(conf(), 'utf8');
      appendFileSync(conf(), '\nbogus_setting = on\n');
      try {
        const { code, output } = await startRefused();
        expect(code).to.equal(1);
        const log = join(dataDir, 'postgres', 'postgres.log');
        expect(output).to.include(
          `[stack] start-up failed: postgres exited with code 1 during start-up: FATAL: configuration file "${conf()}" contains errors (log: ${log})`,
        );
        expect(processesIn(dataDir)).to.deep.equal([]);
      } finally {
        writeFileSync(conf(), good);
      }
    });

    it('a PostgreSQL left running on the data directory: refused up front, naming its pid', async () => {
      leftover = await startPostgres({ dir: join(dataDir, 'postgres'), durability: 'persistent' });
      const { code, output } = await startRefused();
      expect(code).to.equal(1);
      expect(output).to.equal(
        `[stack] start-up failed: a PostgreSQL (pid ${leftover.process.pid}) left running by an earlier npm start still uses ${join(dataDir, 'postgres')}: stop it (kill ${leftover.process.pid}), then start again\n`,
      );
      expect(processesIn(join(dataDir, 'redis'))).to.deep.equal([]);
    });

    it('the lock of a stack that is gone is taken over', async () => {
      await leftover?.stop();
      leftover = undefined;
      // The pid of a process that has exited: what a stack killed with SIGKILL leaves.
      const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
        encoding: 'utf8',
      });
      writeFileSync(join(dataDir, 'stack.pid'), `${gone.stdout}\n`);
      await start();
      expect((await fetch(url(ports.tray, '/healthz'))).status).to.equal(200);
      expect(readFileSync(join(dataDir, 'stack.pid'), 'utf8').trim()).not.to.equal(gone.stdout);
    });
  });

  describe('a data directory of the previous version (servers without passwords)', () => {
    before(async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'stack-test-old-'));
      // What the previous version left: its three secrets, and a PostgreSQL cluster trusting every
      // local connection.
      const old = { JWT_SECRET: 'j'.repeat(43), WEBHOOK_SECRET: 'w'.repeat(43), ADMIN_TOKEN: 'a'.repeat(43) };
      writeFileSync(join(dataDir, 'dev-secrets.json'), JSON.stringify(old), { mode: 0o600 });
      const cluster = await startPostgres({ dir: join(dataDir, 'postgres'), durability: 'persistent' });
      await connectWithoutPassword(cluster.port);
      await cluster.stop();
      await start();
    });
    after(stopAndRemove);

    it('still starts, keeps its secrets, and adds and sets the servers’ passwords', async () => {
      expect(secrets()).to.include({ JWT_SECRET: 'j'.repeat(43), ADMIN_TOKEN: 'a'.repeat(43) });
      expect(secrets().POSTGRES_PASSWORD).to.have.length.of.at.least(43);
      expect(statSync(join(dataDir, 'dev-secrets.json')).mode & 0o777).to.equal(0o600);
      const { redis, postgres } = serverPorts(stack!.output());
      expect(await pingWithoutPassword(redis)).to.match(/^-NOAUTH/);
      await expect(connectWithoutPassword(postgres)).to.be.rejectedWith(/password/);
      expect((await fetch(url(ports.tray, '/readyz'))).status).to.equal(200);
    });
  });

  describe("on the operator's own servers (REDIS_URL, DATABASE_URL with passwords)", () => {
    before(async () => {
      const server = await testPostgres();
      dataDir = mkdtempSync(join(tmpdir(), 'stack-test-own-'));
      // The test servers need no password and ignore one sent: what matters is what is printed.
      const database = new URL(await ensureDatabase(server.url, `stack_own_${process.pid}`));
      database.password = 'operator-pg-password';
      const redis = new URL(testStack().redisUrl);
      redis.password = 'operator-redis-password';
      await start({ DATABASE_URL: database.toString(), REDIS_URL: redis.toString() });
    });
    after(stopAndRemove);

    it('prints their URLs without the passwords', () => {
      const output = stack!.output();
      expect(output).not.to.include('operator-pg-password');
      expect(output).not.to.include('operator-redis-password');
      expect(output).to.match(
        /\[stack\] postgres postgres:\/\/postgres:\*\*\*\*@127\.0\.0\.1:\d+\/stack_own_/,
      );
    });
  });

  // An IPv6 literal must be bracketed in a URL: `http://::1:8080` is not one, and the health probe
  // built that way waited out its 60 s and stopped the stack.
  describe('with HOST=::1 (IPv6 loopback)', () => {
    before(async () => {
      const server = await testPostgres();
      dataDir = mkdtempSync(join(tmpdir(), 'stack-test-ipv6-'));
      const database = await ensureDatabase(server.url, `stack_ipv6_${process.pid}`);
      await start({ HOST: '::1', DATABASE_URL: database, REDIS_URL: testStack().redisUrl });
    });
    after(stopAndRemove);

    it('probes and prints the services at [::1], where they answer', async () => {
      const output = stack!.output();
      expect(output).to.include(`receiver http://[::1]:${ports.receiver}  (`);
      expect(output).to.include(`tray     http://[::1]:${ports.tray}  (`);
      expect(output).to.include(`demo     http://[::1]:${ports.tray}/demo`);
      expect((await fetch(`http://[::1]:${ports.receiver}/healthz`)).status).to.equal(200);
      expect((await fetch(`http://[::1]:${ports.tray}/healthz`)).status).to.equal(200);
    });
  });

  // Every interface: the receiver, its allowlist off, and the demo page would be open to the network.
  describe('with HOST=0.0.0.0 (every interface)', () => {
    let own: Record<string, string>;
    before(async () => {
      const server = await testPostgres();
      dataDir = mkdtempSync(join(tmpdir(), 'stack-test-exposed-'));
      own = {
        HOST: '0.0.0.0',
        DATABASE_URL: await ensureDatabase(server.url, `stack_exposed_${process.pid}`),
        REDIS_URL: testStack().redisUrl,
      };
    });
    after(stopAndRemove);

    it('refuses without STACK_EXPOSE=on, naming what would be open, and starts nothing', async () => {
      const { code, output } = await startRefused(own);
      expect(code).to.equal(1);
      expect(output).to.equal(
        `[stack] start-up failed: HOST=0.0.0.0 would open to other machines, over plain http: the receiver at 0.0.0.0:${ports.receiver}, which takes webhooks from any address (WEBHOOK_ALLOWLIST=off), and the tray API at 0.0.0.0:${ports.tray} with its demo page (TRAY_DEMO=on); set STACK_EXPOSE=on to start so anyway, or leave HOST unset\n`,
      );
    });

    it('with STACK_EXPOSE=on, starts and warns of what is open', async () => {
      await start({ ...own, STACK_EXPOSE: 'on' });
      expect(stack!.output()).to.include(
        `[stack] warning  open to other machines, over plain http: the receiver at 0.0.0.0:${ports.receiver}, which takes webhooks from any address (WEBHOOK_ALLOWLIST=off), and the tray API at 0.0.0.0:${ports.tray} with its demo page (TRAY_DEMO=on)`,
      );
      expect((await fetch(url(ports.tray, '/healthz'))).status).to.equal(200);
    });
  });
});
