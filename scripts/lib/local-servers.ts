import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  fchmodSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { hasExited } from './has-exited.ts';
import { trackStarted } from './started-processes.ts';
import { logFailureLine, markLog, type LogMark } from './log-failure-line.ts';
import { pgAdminClient } from './pg-admin-client.ts';
import { makeOwnerOnlyDir } from './owner-only-dir.ts';

/**
 * A server process as soon as it is spawned, before it is ready: what a caller needs to stop it if
 * it is interrupted or fails while the server starts (the dev stack's Ctrl-C).
 */
export interface SpawnedServer {
  readonly name: string;
  stop(): Promise<void>;
}

/** Told of each server process the moment it is spawned. */
export type OnSpawn = (server: SpawnedServer) => void;

/** A server process this project started, with what is needed to stop or restart it. */
export interface LocalServer {
  readonly name: string;
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  /** The server's own log: where to look when it ends. */
  readonly log: string;
  readonly process: ChildProcess;
  /** SIGTERM, then SIGKILL after a grace period; resolves when the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

// Ports this process has already handed out: the kernel soon offers a port just closed again, so
// two calls in a row (a tray's TRAY_PORT and ADMIN_PORT) could otherwise get the same one.
const handedOut = new Set<number>();

/** A port nothing listens on now, never one this process was given before. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const port = await unusedPort();
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error('no port this process has not used already after 100 tries');
}

function unusedPort(): Promise<number> {
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

/** Whether something accepts TCP connections on 127.0.0.1:port now. */
export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Whether process `pid` holds a socket listening on `port` (Linux: /proc/net/tcp{,6} name the
 * listening sockets' inodes, /proc/<pid>/fd the process's). True where /proc cannot tell.
 */
function listensOn(pid: number | undefined, port: number): boolean {
  if (pid === undefined || !existsSync('/proc/net/tcp')) return true;
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is ADDR:PORT; st 0A is LISTEN; the inode is the tenth field.
      if (fields[1]?.endsWith(`:${hexPort}`) && fields[3] === '0A' && fields[9]) inodes.add(fields[9]);
    }
  }
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return true;
  }
  return fds.some((fd) => {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      return inodes.has(/^socket:\[(\d+)\]$/.exec(target)?.[1] ?? '');
    } catch {
      return false;
    }
  });
}

/** Why a server's command could not be run at all (not found, not executable), by its process. */
const spawnFailures = new WeakMap<ChildProcess, Error>();

/** A server that ended while starting, with the reason its log gives and where that log is. */
function exitedDuringStartUp(name: string, child: ChildProcess, log: LogMark): Error {
  const failed = spawnFailures.get(child);
  if (failed) return new Error(`${name} could not be started: ${failed.message}`);
  const how = child.exitCode === null ? `on ${child.signalCode}` : `with code ${child.exitCode}`;
  const reason = logFailureLine(log);
  return new Error(`${name} exited ${how} during start-up${reason ? `: ${reason}` : ''} (log: ${log.path})`);
}

async function waitForPort(
  name: string,
  port: number,
  child: ChildProcess,
  timeoutMs: number,
  log: LogMark,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (hasExited(child)) throw exitedDuringStartUp(name, child, log);
    // Another program on the port (a freed port another process took) answers too: only the
    // child's own listener counts, and the child then fails to bind and exits, named above.
    if ((await canConnect(port)) && listensOn(child.pid, port)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${name} did not listen on port ${port} within ${timeoutMs} ms`);
}

function stopper(child: ChildProcess, graceMs = 5_000) {
  return async (signal: NodeJS.Signals = 'SIGTERM'): Promise<void> => {
    if (hasExited(child)) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
}

function launch(
  name: string,
  command: string,
  args: string[],
  dir: string,
  user: { uid?: number; gid?: number } = {},
): { child: ChildProcess; log: LogMark } {
  // The server's files and its log are its owner's only (mkdir's mode does not apply to an old
  // folder, nor open's to an old file).
  makeOwnerOnlyDir(dir);
  chmodSync(dir, 0o700);
  const path = join(dir, `${name}.log`);
  const mark = markLog(path);
  const log = openSync(path, 'a', 0o600);
  fchmodSync(log, 0o600);
  // Its own process group is not used: children must die with the parent when it is killed.
  const child = spawn(command, args, { stdio: ['ignore', log, log], ...user });
  // A command that cannot be run is an 'error' event (with a negative exit code, which the wait for
  // its port reports): unhandled, it ended the tool at once, leaving the servers it had started.
  child.on('error', (error) => spawnFailures.set(child, error));
  return { child, log: mark };
}

/** The `postgres` account (Debian's package creates it): PostgreSQL refuses to run as root. */
function postgresUser(): { uid: number; gid: number } {
  const id = (flag: string) =>
    Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim() || Number.NaN);
  const ids = { uid: id('-u'), gid: id('-g') };
  if (!Number.isInteger(ids.uid) || !Number.isInteger(ids.gid)) {
    throw new Error('running as root, but there is no `postgres` account to run PostgreSQL as');
  }
  return ids;
}

export interface RedisOptions {
  dir: string;
  port?: number;
  /**
   * Append-only file written and fsynced before Redis answers (`appendfsync always`), so every write
   * Redis acknowledged survives a restart or a crash (dev stack, fault tests). Unset: no file.
   */
  persistent?: boolean;
  /** Default `noeviction`; tests of the start-up check pass an evicting policy. */
  maxmemoryPolicy?: string;
  /**
   * Clients must send it (`requirepass`): the dev stack's, so no other local account can use the
   * queue. Given in a 0600 file under `dir`, never on the command line, which every account sees.
   * Unset (tests, benches): no password.
   */
  password?: string;
  /** More redis-server arguments after these (tests: a replica's `--replicaof`, a renamed command). */
  args?: readonly string[];
  onSpawn?: OnSpawn;
}

export async function startRedis(options: RedisOptions): Promise<LocalServer> {
  const port = options.port ?? (await freePort());
  const conf = join(options.dir, 'redis.conf');
  if (options.password !== undefined) {
    makeOwnerOnlyDir(options.dir);
    writeFileSync(conf, `requirepass ${options.password}\n`, { mode: 0o600 });
    chmodSync(conf, 0o600);
  }
  const args = [
    ...(options.password === undefined ? [] : [conf]),
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    options.dir,
    // While it runs (Redis removes it when it stops): the dev stack finds one left running by a
    // stack that was killed, before starting another on the same files.
    '--pidfile',
    join(options.dir, 'redis.pid'),
    '--save',
    '',
    '--appendonly',
    options.persistent ? 'yes' : 'no',
    // `everysec` answers before writing while the last second's fsync runs, so a killed Redis
    // loses writes it acknowledged (receiver/store/warn-volatile-redis.ts). `always` costs one
    // fsync per event-loop turn, shared by every call of that turn (BENCHMARKS.md).
    '--appendfsync',
    'always',
    // A queued job's hash holds its event's text (1-2 KB): Redis's default keeps a hash with a
    // value over 64 bytes as a hashtable; up to 4 KB it stays one listpack, 14% less memory a
    // job at the same CPU (BENCHMARKS.md, "Redis memory a delivery costs").
    '--hash-max-listpack-value',
    '4096',
    // Queue data must never be evicted (bull's documented requirement).
    '--maxmemory-policy',
    options.maxmemoryPolicy ?? 'noeviction',
    '--daemonize',
    'no',
    ...(options.args ?? []),
  ];
  const { child, log } = launch('redis', 'redis-server', args, options.dir);
  const stop = stopper(child);
  trackStarted(child, () => stop());
  options.onSpawn?.({ name: 'redis', stop: () => stop() });
  await waitForPort('redis-server', port, child, 10_000, log);
  return {
    name: 'redis',
    url:
      options.password === undefined
        ? `redis://127.0.0.1:${port}`
        : `redis://:${encodeURIComponent(options.password)}@127.0.0.1:${port}`,
    port,
    dir: options.dir,
    log: log.path,
    process: child,
    stop,
  };
}

/**
 * The FerretDB binary: FERRETDB_BIN, then the one scripts/setup.sh builds (Go's bin folder, where
 * setup checks the pinned version), then one on PATH. The order is setup's: a `ferretdb` of
 * another version earlier on PATH must not win over the one setup built.
 */
export function ferretdbBinary(env: NodeJS.ProcessEnv = process.env): string {
  if (env.FERRETDB_BIN) return env.FERRETDB_BIN;
  const gopath = spawnSync('go', ['env', 'GOPATH'], { encoding: 'utf8', env }).stdout?.trim();
  const built = gopath ? join(gopath, 'bin', 'ferretdb') : undefined;
  if (built && existsSync(built)) return built;
  const onPath = spawnSync('sh', ['-c', 'command -v ferretdb'], { encoding: 'utf8', env }).stdout.trim();
  if (onPath) return onPath;
  throw new Error('ferretdb not found: run `npm run setup` (or set FERRETDB_BIN or MONGODB_URI)');
}

export interface FerretOptions {
  dir: string;
  port?: number;
  /**
   * The PostgreSQL database FerretDB stores its data in (startPostgres's `ferretUrl`). PostgreSQL is
   * the only backend the project runs: it pushes top-level equality filters down to SQL, where GIN
   * expression indexes serve them (tray-service/storage/mongodb/setup/ensure-collections.ts). FerretDB's SQLite backend
   * pushes down only `_id` equality, and even that scans without an extra index, so it is not
   * offered.
   */
  postgresUrl: string;
}

export async function startFerret(options: FerretOptions): Promise<LocalServer> {
  const port = options.port ?? (await freePort());
  const args = [
    '--handler=postgresql',
    `--postgresql-url=${options.postgresUrl}`,
    `--listen-addr=127.0.0.1:${port}`,
    `--state-dir=${options.dir}`,
    // The default debug port (8088) collides when two servers run at once.
    '--debug-addr=-',
    '--telemetry=disable',
    '--log-level=warn',
  ];
  mkdirSync(options.dir, { recursive: true });
  const { child, log } = launch('ferretdb', ferretdbBinary(), args, options.dir);
  const stop = stopper(child);
  trackStarted(child, () => stop());
  await waitForPort('ferretdb', port, child, 20_000, log);
  return {
    name: 'ferretdb',
    url: `mongodb://127.0.0.1:${port}/`,
    port,
    dir: options.dir,
    log: log.path,
    process: child,
    stop,
  };
}

const POSTGRES_ROOT = '/usr/lib/postgresql';

/** The major versions of Debian's PostgreSQL servers installed (package postgresql), newest first. */
function postgresVersions(): string[] {
  return existsSync(POSTGRES_ROOT) ? readdirSync(POSTGRES_ROOT).sort((a, b) => Number(b) - Number(a)) : [];
}

/**
 * A tool of Debian's PostgreSQL server (package postgresql): of major version `version` (a data
 * folder's, which only its own major version's server starts), else of the newest installed.
 */
function postgresBin(tool: string, version?: string): string {
  const versions = version === undefined ? postgresVersions() : [version];
  const found = versions.map((v) => join(POSTGRES_ROOT, v, 'bin', tool)).find((path) => existsSync(path));
  if (!found) throw new Error('PostgreSQL server not found: apt-get install postgresql');
  return found;
}

/**
 * The `postgres` binary of the major version that made the data folder `data`. Without it,
 * PostgreSQL itself would stop with one line ("database files are incompatible with server"), so
 * this says which versions and what to do instead.
 */
function postgresFor(data: string): string {
  const version = readFileSync(join(data, 'PG_VERSION'), 'utf8').trim();
  if (existsSync(join(POSTGRES_ROOT, version, 'bin', 'postgres'))) return postgresBin('postgres', version);
  throw new Error(
    `the data folder ${data} was made by PostgreSQL ${version}, whose server is not installed ` +
      `(installed: ${postgresVersions().join(', ') || 'none'}): install postgresql-${version}, ` +
      'or move the folder to the installed version (pg_upgrade), or remove it to start afresh',
  );
}

/** A PostgreSQL server this project started, with the URLs its clients use. */
export interface PostgresServer extends LocalServer {
  /** The server's `postgres` database (FerretDB stores its data there, one schema per database). */
  readonly url: string;
  /**
   * The same database for FerretDB itself: `plan_cache_mode=force_custom_plan`, so PostgreSQL plans
   * each of FerretDB's prepared statements with the values it filters on.
   */
  readonly ferretUrl: string;
}

export interface PostgresOptions {
  dir: string;
  port?: number;
  /**
   * `throwaway` (tests, benches): fsync off, a crash may lose the cluster. `persistent` (the dev
   * stack, the user's data): fsync stays on; only synchronous_commit is off, so a crash loses at
   * most the last fraction of a second of commits, never consistency.
   */
  durability?: 'throwaway' | 'persistent';
  /**
   * The `postgres` superuser's password, with scram-sha-256 for every connection (TCP and the
   * socket): the dev stack's, so no other local account can connect as superuser. A cluster made
   * before, trusting every local connection, gets it set and its trust replaced. Unset (tests'
   * throwaway clusters in temp directories): trust on 127.0.0.1.
   */
  password?: string;
  /** Further server settings (`-c name=value`) after the defaults: a test's small lock table, say. */
  settings?: Readonly<Record<string, string>>;
  onSpawn?: OnSpawn;
}

/** Client authentication with a password for every connection, the socket's included. */
const SCRAM_HBA = [
  'local all all scram-sha-256',
  'host all all 127.0.0.1/32 scram-sha-256',
  'host all all ::1/128 scram-sha-256',
  '',
].join('\n');

/** initdb's options: trust, or scram with the password read from a file (never the command line). */
function initdbAuth(dir: string, password: string | undefined, user: { uid?: number }): string[] {
  if (password === undefined) return ['--auth=trust'];
  const pwfile = join(dir, 'initdb-password');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if ('uid' in user) spawnSync('chown', ['postgres', pwfile]);
  return ['--auth=scram-sha-256', `--pwfile=${pwfile}`];
}

/** PostgreSQL refused the password it was given: waiting will not change the answer. */
export class PasswordRefusedError extends Error {
  override readonly name = 'PasswordRefusedError';
}

/**
 * A cluster made while the stack's PostgreSQL trusted every local connection: sets the superuser's
 * password (still over trust), then requires it from every connection from now on.
 */
async function requirePassword(data: string, url: string, password: string): Promise<void> {
  const hba = join(data, 'pg_hba.conf');
  if (!/^\s*(?:local|host)\S*\s.*\btrust\b/m.test(readFileSync(hba, 'utf8'))) return;
  const client = pgAdminClient(url);
  await client.connect();
  try {
    await client.query("SET password_encryption = 'scram-sha-256'");
    await client.query(`ALTER ROLE postgres PASSWORD ${client.escapeLiteral(password)}`);
    // Overwritten in place: the file keeps its owner (`postgres` when this runs as root).
    writeFileSync(hba, SCRAM_HBA);
    await client.query('SELECT pg_reload_conf()');
  } finally {
    await client.end();
  }
}

/**
 * A PostgreSQL server of the project's own (FerretDB's storage): a cluster under `dir` created on
 * first use (kept between runs when `dir` is), on 127.0.0.1 and a socket in `dir` only, with a
 * password when `password` is given (else trust), no system service touched.
 */
/** A new cluster in `data` (which must not hold one): initdb, about 2 s. */
function initdb(data: string, dir: string, password: string | undefined, user: { uid?: number }): void {
  // UTF8 whatever the caller's locale (FerretDB refuses any other encoding; a bare environment
  // would give SQL_ASCII); the C locale sorts by byte, like MongoDB.
  const auth = initdbAuth(dir, password, user);
  const result = spawnSync(
    postgresBin('initdb'),
    ['-D', data, '-U', 'postgres', ...auth, '--encoding=UTF8', '--locale=C'],
    { encoding: 'utf8', ...user },
  );
  rmSync(join(dir, 'initdb-password'), { force: true });
  if (result.status !== 0) throw new Error(`initdb failed: ${result.stderr}`);
}

let trustTemplateDir: string | undefined;

/**
 * A cluster without a password, made by initdb once per process and never started, that every
 * further such cluster is a copy of: a test run starts a dozen, and copying its 40 MB takes about
 * a tenth of initdb's 2 s. Removed when the process exits.
 */
function trustTemplate(user: { uid?: number }): string {
  if (trustTemplateDir) return join(trustTemplateDir, 'data');
  const dir = mkdtempSync(join(tmpdir(), 'pg-template-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  if ('uid' in user) spawnSync('chown', ['postgres', dir]);
  initdb(join(dir, 'data'), dir, undefined, user);
  trustTemplateDir = dir;
  return join(dir, 'data');
}

/** `cp -a`: the copy keeps the owner and the modes PostgreSQL insists on for its data folder. */
function copyCluster(template: string, data: string): void {
  const result = spawnSync('cp', ['-a', template, data], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`copying the template cluster failed: ${result.stderr}`);
}

/**
 * Makes a cluster beside `data` and renames it into place once whole: initdb writes PG_VERSION
 * first, so one cut short (SIGKILL, a power cut) in place left a folder that every later start
 * took for a finished cluster and failed on. A folder at `data` without PG_VERSION is no cluster
 * (such a leftover), and is replaced.
 */
function makeCluster(data: string, dir: string, password: string | undefined, user: { uid?: number }): void {
  const building = `${data}.initdb`;
  rmSync(building, { recursive: true, force: true });
  if (password === undefined) copyCluster(trustTemplate(user), building);
  else initdb(building, dir, password, user);
  rmSync(data, { recursive: true, force: true });
  renameSync(building, data);
}

export async function startPostgres(options: PostgresOptions): Promise<PostgresServer> {
  const port = options.port ?? (await freePort());
  const data = join(options.dir, 'data');
  // Spawned as `postgres` directly (not through runuser): the child is the postmaster itself, so a
  // signal (a fault test's SIGKILL, a fast shutdown) reaches it and nothing is left orphaned.
  const account = process.getuid?.() === 0 ? postgresUser() : undefined;
  const user: { uid?: number; gid?: number } = account ?? {};
  if (account) checkPassable(dirname(dirname(options.dir)), account);
  // Folders above it made as any other (0700, the postgres account could not pass them), then its
  // socket, log and cluster: the owner's only (PostgreSQL itself wants its data folder so).
  mkdirSync(dirname(options.dir), { recursive: true });
  makeOwnerOnlyDir(options.dir);
  chmodSync(options.dir, 0o700);
  if (account) {
    spawnSync('chown', ['-R', 'postgres', options.dir]);
    letThrough(dirname(options.dir), account.gid);
  }
  if (!existsSync(join(data, 'PG_VERSION'))) makeCluster(data, options.dir, options.password, user);
  const durability =
    options.durability === 'persistent'
      ? ['-c', 'synchronous_commit=off']
      : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'];
  const args = [
    '-D',
    data,
    '-p',
    String(port),
    '-c',
    'listen_addresses=127.0.0.1',
    '-k',
    options.dir,
    ...durability,
    // Modest: the machine runs Redis, FerretDB and the services beside it.
    '-c',
    'shared_buffers=128MB',
    // FerretDB's pool holds up to 50 connections; tests run several FerretDB servers on one cluster.
    '-c',
    'max_connections=300',
    ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
  ];
  const { child, log } = launch('postgres', postgresFor(data), args, options.dir, user);
  // SIGINT is PostgreSQL's fast shutdown; SIGTERM would wait for FerretDB's connections to end.
  const stop = (signal: NodeJS.Signals = 'SIGINT') => stopper(child, 30_000)(signal);
  trackStarted(child, () => stop());
  options.onSpawn?.({ name: 'postgres', stop: () => stop() });
  await waitForPort('postgres', port, child, 20_000, log);
  const bare = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const url =
    options.password === undefined
      ? bare
      : `postgres://postgres:${encodeURIComponent(options.password)}@127.0.0.1:${port}/postgres`;
  if (options.password !== undefined) {
    await waitForQueries(bare, child, log, 60_000, true);
    await requirePassword(data, bare, options.password);
  }
  await waitForQueries(url, child, log);
  return {
    name: 'postgres',
    url,
    ferretUrl: `${url}?plan_cache_mode=force_custom_plan`,
    port,
    dir: options.dir,
    log: log.path,
    process: child,
    stop,
  };
}

/**
 * The folders from `folder` up to `/`, which the postgres account must pass to reach its data
 * (the one folder above the data's own is opened by letThrough): the user's, never changed here.
 * A checkout under /root (0700) failed in initdb with a bare "Permission denied". Read from the
 * mode bits and the account's own group: the server is spawned with no other group.
 */
function checkPassable(folder: string, account: { uid: number; gid: number }): void {
  for (let current = resolve(folder); ; current = dirname(current)) {
    const found = statSync(current, { throwIfNoEntry: false });
    if (found) {
      const { mode, uid, gid } = found;
      const passes =
        (uid === account.uid && (mode & 0o100) !== 0) ||
        (gid === account.gid && (mode & 0o010) !== 0) ||
        (mode & 0o001) !== 0;
      if (!passes)
        throw new Error(
          `PostgreSQL runs as the postgres account, which cannot pass ${current} (mode ${(mode & 0o777).toString(8)}): give its data a folder it can reach (npm start: STACK_DATA_DIR), or let it pass (chmod o+x ${current})`,
        );
    }
    if (dirname(current) === current) return;
  }
}

/**
 * Lets the `postgres` account traverse the folder holding its own (search only, no listing). A
 * folder closed to its group (a 0700 mkdtemp folder, the dev stack's data directory) is given to
 * group `postgres` for that (0710), so no other account gains anything; one whose group already has
 * rights keeps its group and is opened to others for search instead.
 */
function letThrough(folder: string, postgresGid: number): void {
  const { mode, uid, gid } = statSync(folder);
  if ((mode & 0o001) !== 0 || (gid === postgresGid && (mode & 0o010) !== 0)) return;
  if ((mode & 0o070) === 0) {
    chownSync(folder, uid, postgresGid);
    chmodSync(folder, (mode & 0o7777) | 0o010);
  } else {
    chmodSync(folder, (mode & 0o7777) | 0o001);
  }
}

/**
 * The port opens before the server accepts queries (recovery after an unclean stop can take a
 * while). `orRefused`: a refused password also counts as up (the server answered).
 */
async function waitForQueries(
  url: string,
  child: ChildProcess,
  log: LogMark,
  timeoutMs = 60_000,
  orRefused = false,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = pgAdminClient(url);
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (error) {
      // 28P01 invalid password, 28000 no such authorization, or the client asked for a password
      // it was not given: waiting will not change the answer.
      const code = (error as { code?: unknown }).code;
      if (code === '28P01' || code === '28000' || /password/i.test((error as Error).message)) {
        if (orRefused) return;
        throw new PasswordRefusedError(`postgres refused the password: ${(error as Error).message}`);
      }
      if (hasExited(child)) throw exitedDuringStartUp('postgres', child, log);
      if (Date.now() > deadline)
        throw new Error(`postgres did not accept queries: ${(error as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

/** PostgreSQL and a FerretDB on it: the project's MongoDB-compatible server. */
export interface FerretOnPostgres {
  readonly postgres: PostgresServer;
  readonly ferret: LocalServer;
  /** Stops FerretDB, then PostgreSQL. */
  stop(): Promise<void>;
}

export async function startFerretOnPostgres(options: {
  dir: string;
  ferretPort?: number;
  durability?: PostgresOptions['durability'];
}): Promise<FerretOnPostgres> {
  const postgres = await startPostgres({
    dir: join(options.dir, 'postgres'),
    ...(options.durability ? { durability: options.durability } : {}),
  });
  try {
    const ferret = await startFerret({
      dir: join(options.dir, 'ferretdb'),
      postgresUrl: postgres.ferretUrl,
      ...(options.ferretPort ? { port: options.ferretPort } : {}),
    });
    return {
      postgres,
      ferret,
      async stop() {
        await ferret.stop();
        await postgres.stop();
      },
    };
  } catch (error) {
    await postgres.stop();
    throw error;
  }
}
