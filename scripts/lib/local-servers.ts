import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { dirname, join } from 'node:path';

/** A server process this project started, with what is needed to stop or restart it. */
export interface LocalServer {
  readonly name: string;
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  readonly process: ChildProcess;
  /** SIGTERM, then SIGKILL after a grace period; resolves when the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function waitForPort(
  name: string,
  port: number,
  child: ChildProcess,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`${name} exited with code ${child.exitCode} during start-up`);
    if (await canConnect(port)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${name} did not listen on port ${port} within ${timeoutMs} ms`);
}

function stopper(child: ChildProcess, graceMs = 5_000) {
  return async (signal: NodeJS.Signals = 'SIGTERM'): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
}

function launch(name: string, command: string, args: string[], dir: string): ChildProcess {
  mkdirSync(dir, { recursive: true });
  const log = openSync(join(dir, `${name}.log`), 'a');
  // Its own process group is not used: children must die with the parent when it is killed.
  return spawn(command, args, { stdio: ['ignore', log, log] });
}

export interface RedisOptions {
  dir: string;
  port?: number;
  /** Append-only file with fsync every second, so data survives a restart (dev stack, fault tests). */
  persistent?: boolean;
  /** Default `noeviction`; tests of the start-up check pass an evicting policy. */
  maxmemoryPolicy?: string;
}

export async function startRedis(options: RedisOptions): Promise<LocalServer> {
  const port = options.port ?? (await freePort());
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    options.dir,
    '--save',
    '',
    '--appendonly',
    options.persistent ? 'yes' : 'no',
    '--appendfsync',
    'everysec',
    // Queue data must never be evicted (bull's documented requirement).
    '--maxmemory-policy',
    options.maxmemoryPolicy ?? 'noeviction',
    '--daemonize',
    'no',
  ];
  const child = launch('redis', 'redis-server', args, options.dir);
  await waitForPort('redis-server', port, child, 10_000);
  return {
    name: 'redis',
    url: `redis://127.0.0.1:${port}`,
    port,
    dir: options.dir,
    process: child,
    stop: stopper(child),
  };
}

/** The FerretDB binary: FERRETDB_BIN, then PATH, then where `go install` puts it (scripts/setup.sh). */
export function ferretdbBinary(env: NodeJS.ProcessEnv = process.env): string {
  if (env.FERRETDB_BIN) return env.FERRETDB_BIN;
  const onPath = spawnSync('sh', ['-c', 'command -v ferretdb'], { encoding: 'utf8' }).stdout.trim();
  if (onPath) return onPath;
  const gopath = spawnSync('go', ['env', 'GOPATH'], { encoding: 'utf8' }).stdout.trim();
  const candidate = join(gopath, 'bin', 'ferretdb');
  if (gopath && existsSync(candidate)) return candidate;
  throw new Error('ferretdb not found: run `npm run setup` (or set FERRETDB_BIN or MONGODB_URI)');
}

export interface FerretOptions {
  dir: string;
  port?: number;
  /**
   * Storage: SQLite (default; what tests use) or a PostgreSQL database URL. On SQLite FerretDB 1.24
   * serves only `_id` lookups from an index and scans the whole collection for anything else; on
   * PostgreSQL it pushes filters down to SQL, which makes million-record benchmarks practical.
   */
  postgresUrl?: string;
}

export async function startFerret(options: FerretOptions): Promise<LocalServer> {
  const port = options.port ?? (await freePort());
  const dataDir = join(options.dir, 'sqlite');
  mkdirSync(dataDir, { recursive: true });
  const storage = options.postgresUrl
    ? ['--handler=postgresql', `--postgresql-url=${options.postgresUrl}`]
    : ['--handler=sqlite', `--sqlite-url=file:${dataDir}/`];
  const args = [
    ...storage,
    `--listen-addr=127.0.0.1:${port}`,
    `--state-dir=${options.dir}`,
    // The default debug port (8088) collides when two servers run at once.
    '--debug-addr=-',
    '--telemetry=disable',
    '--log-level=warn',
  ];
  const child = launch('ferretdb', ferretdbBinary(), args, options.dir);
  await waitForPort('ferretdb', port, child, 20_000);
  return {
    name: 'ferretdb',
    url: `mongodb://127.0.0.1:${port}/`,
    port,
    dir: options.dir,
    process: child,
    stop: stopper(child),
  };
}

/** Debian's PostgreSQL server binaries (package postgresql), newest major version first. */
function postgresBin(tool: string): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  const found = versions.map((v) => join(root, v, 'bin', tool)).find((path) => existsSync(path));
  if (!found) throw new Error('PostgreSQL server not found: apt-get install postgresql');
  return found;
}

/**
 * A throwaway PostgreSQL server (for FerretDB's PostgreSQL backend in benchmarks): trust auth on
 * 127.0.0.1, fsync off. PostgreSQL refuses to run as root, so as root it runs as `postgres`.
 */
export async function startPostgres(options: { dir: string; port?: number }): Promise<LocalServer> {
  const port = options.port ?? (await freePort());
  const data = join(options.dir, 'data');
  const asRoot = process.getuid?.() === 0;
  const run = (command: string, args: string[]) =>
    asRoot ? { command: 'runuser', args: ['-u', 'postgres', '--', command, ...args] } : { command, args };
  mkdirSync(options.dir, { recursive: true });
  if (asRoot) {
    spawnSync('chown', ['-R', 'postgres', options.dir]);
    // A mkdtemp parent is 0700: let `postgres` traverse it (search only, no listing).
    spawnSync('chmod', ['o+x', dirname(options.dir)]);
  }
  if (!existsSync(join(data, 'PG_VERSION'))) {
    const init = run(postgresBin('initdb'), ['-D', data, '-U', 'postgres', '--auth=trust']);
    const result = spawnSync(init.command, init.args, { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`initdb failed: ${result.stderr}`);
  }
  const server = run(postgresBin('postgres'), [
    '-D',
    data,
    '-p',
    String(port),
    '-c',
    'listen_addresses=127.0.0.1',
    '-k',
    options.dir,
    '-c',
    'fsync=off',
  ]);
  const child = launch('postgres', server.command, server.args, options.dir);
  await waitForPort('postgres', port, child, 20_000);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  // The port opens before the server accepts queries; FerretDB's first connection may retry.
  await new Promise((resolve) => setTimeout(resolve, 500));
  return { name: 'postgres', url, port, dir: options.dir, process: child, stop: stopper(child) };
}
