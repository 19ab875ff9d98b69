import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { canConnect, freePort } from './local-servers.ts';

/** One redis-server of a local cluster. */
export interface ClusterNode {
  readonly port: number;
  /** `127.0.0.1:<port>`, as it appears in REDIS_CLUSTER_NODES and CLUSTER NODES. */
  readonly address: string;
  readonly dir: string;
  readonly process: ChildProcess;
  /** True once the process has exited (a fault test killed it). */
  exited(): boolean;
  /** True while the process is stopped by pause(). */
  paused(): boolean;
  /**
   * SIGSTOP: the node hangs (its connections stay open, nothing is answered), as behind a cut
   * network or on a frozen machine. Until resume(), the cluster's own checks leave it out.
   */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
  /** SIGTERM, then SIGKILL after a grace period; resolves when the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** A node's role as the cluster itself reports it (CLUSTER NODES, seen from a live node). */
export interface ClusterNodeRole {
  readonly address: string;
  readonly role: 'master' | 'replica';
  /** Address of the master a replica follows. */
  readonly masterAddress?: string;
  readonly failed: boolean;
}

export interface LocalRedisCluster {
  readonly nodes: readonly ClusterNode[];
  /** Every node's address, comma-separated: the value for REDIS_CLUSTER_NODES. */
  readonly seeds: string;
  /** Roles seen from the first live node (neither exited nor paused). */
  roles(): Promise<ClusterNodeRole[]>;
  /** The node serving `key`'s slot as master right now. */
  masterOf(key: string): Promise<ClusterNode>;
  /** A live replica of `master`. */
  replicaOf(master: ClusterNode): Promise<ClusterNode>;
  /**
   * Resolves once every live node reports `cluster_state:ok`, all slots served, and every master
   * (as the cluster sees it) is served by a live node; throws after `timeoutMs`. A paused node is
   * not live: this waits for its replica to take over.
   */
  waitUntilOk(timeoutMs?: number): Promise<void>;
  /** Stops every node (SIGKILL: nothing of a test cluster is kept). */
  stop(): Promise<void>;
}

export interface RedisClusterOptions {
  dir: string;
  masters?: number;
  replicasPerMaster?: number;
  /**
   * `cluster-node-timeout`: how long a master may be unreachable before its replica takes over.
   * Redis's default is 15 s; tests use 1 s so a failover completes within a couple of seconds.
   */
  nodeTimeoutMs?: number;
  /** `requirepass` (and `masterauth`) of every node: a cluster that asks its clients for AUTH. */
  password?: string;
  /**
   * TLS only (no port in clear), between the nodes too, each node announced as `localhost`: the
   * nodes' certificate and key, and the CA every node and admin connection verifies them with
   * (PEM files).
   */
  tls?: ClusterTls;
}

export interface ClusterTls {
  certFile: string;
  keyFile: string;
  caFile: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A node that ended while it started: its port, or its bus port, was taken or out of range. */
class NodeExitedError extends Error {
  constructor(port: number) {
    super(`redis-server on port ${port} exited during start-up`);
    this.name = 'NodeExitedError';
  }
}

async function startNode(
  port: number,
  dir: string,
  nodeTimeoutMs: number,
  password: string | undefined,
  tls: ClusterTls | undefined,
): Promise<ClusterNode> {
  mkdirSync(dir, { recursive: true });
  const log = openSync(join(dir, 'redis.log'), 'a');
  const listen =
    tls === undefined
      ? ['--port', String(port)]
      : [
          '--port',
          '0',
          '--tls-port',
          String(port),
          '--tls-cert-file',
          tls.certFile,
          '--tls-key-file',
          tls.keyFile,
          '--tls-ca-cert-file',
          tls.caFile,
          // The cluster bus and replication over TLS too; clients show no certificate of their own.
          '--tls-cluster',
          'yes',
          '--tls-replication',
          'yes',
          '--tls-auth-clients',
          'no',
          // Announced by name, as managed clusters do: the certificate names no address.
          '--cluster-announce-hostname',
          'localhost',
          '--cluster-preferred-endpoint-type',
          'hostname',
        ];
  const args = [
    ...listen,
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    join(dir, 'nodes.conf'),
    '--cluster-node-timeout',
    String(nodeTimeoutMs),
    // A replica whose link to its master broke a while ago still takes over: in a test cluster
    // losing availability would only hide what a failover costs.
    '--cluster-replica-validity-factor',
    '0',
    '--save',
    '',
    '--appendonly',
    'no',
    // Queue data must never be evicted (bull's documented requirement), on any node.
    '--maxmemory-policy',
    'noeviction',
    '--daemonize',
    'no',
    ...(password === undefined ? [] : ['--requirepass', password, '--masterauth', password]),
  ];
  const child = spawn('redis-server', args, { stdio: ['ignore', log, log] });
  let spawnError: Error | undefined;
  child.once('error', (error) => (spawnError = error));
  const deadline = Date.now() + 10_000;
  while (!(await canConnect(port))) {
    if (spawnError) throw new Error(`cannot run redis-server (${spawnError.message}): npm run setup`);
    if (child.exitCode !== null) throw new NodeExitedError(port);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`redis-server did not listen on port ${port} within 10 s`);
    }
    await sleep(50);
  }
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  let stopped = false;
  return {
    port,
    address: `127.0.0.1:${port}`,
    dir,
    process: child,
    exited,
    paused: () => stopped && !exited(),
    pause() {
      child.kill('SIGSTOP');
      stopped = true;
    },
    resume() {
      child.kill('SIGCONT');
      stopped = false;
    },
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (exited()) return;
      const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await done;
      clearTimeout(timer);
    },
  };
}

/** Runs redis-cli and resolves with its output, or rejects with it when the exit code is not 0. */
function redisCli(args: readonly string[], timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('redis-cli', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot run redis-cli (${error.message}): install redis-tools`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else reject(new Error(`redis-cli ${args.join(' ')} failed (${code}):\n${output}`));
    });
  });
}

/** One short-lived connection to one node (not cluster-aware), for administrative commands. */
async function withNode<T>(
  port: number,
  use: (redis: Redis) => Promise<T>,
  password?: string,
  tls?: ClusterTls,
): Promise<T> {
  const redis = new Redis({
    // The name the certificate of a TLS node holds.
    host: tls === undefined ? '127.0.0.1' : 'localhost',
    port,
    ...(password === undefined ? {} : { password }),
    ...(tls === undefined ? {} : { tls: { ca: readFileSync(tls.caFile) } }),
    lazyConnect: true,
    connectTimeout: 1_000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}

/** `127.0.0.1:7000@17000` (address and cluster bus port) without the bus port. */
const withoutBusPort = (field: string) => field.replace(/@.*$/, '');

/** CLUSTER NODES lines as roles. `myself` and `noaddr` flags are irrelevant here. */
function parseClusterNodes(text: string): (ClusterNodeRole & { id: string; slots: boolean })[] {
  const rows = text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [id = '', address = '', flags = '', masterId = '-', , , , , ...slots] = line.split(' ');
      return { id, address: withoutBusPort(address), flags: flags.split(','), masterId, slots };
    });
  const addressOf = new Map(rows.map((row) => [row.id, row.address]));
  return rows.map((row) => {
    const masterAddress = row.masterId === '-' ? undefined : addressOf.get(row.masterId);
    return {
      id: row.id,
      address: row.address,
      role: row.flags.includes('master') ? ('master' as const) : ('replica' as const),
      ...(masterAddress ? { masterAddress } : {}),
      failed: row.flags.includes('fail'),
      slots: row.slots.length > 0,
    };
  });
}

/** A node also listens on its port plus this, for the cluster bus (Redis's fixed offset). */
const BUS_PORT_OFFSET = 10_000;

/** Whether nothing listens on `port` of 127.0.0.1 now. */
function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A free port for a node whose bus port is free too. Redis refuses a port above 55535 (its bus
 * port would pass 65535) and exits when the bus port is taken: either way the node exited during
 * start-up, which the system's ephemeral ports (32768-60999) made happen now and then.
 */
async function nodePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const port = await freePort();
    if (port + BUS_PORT_OFFSET <= 65_535 && (await canBind(port + BUS_PORT_OFFSET))) return port;
  }
  throw new Error('no port with a free cluster bus port after 100 tries');
}

/**
 * A Redis Cluster of `masters` masters with `replicasPerMaster` replicas each, on 127.0.0.1 and
 * free ports, created with `redis-cli --cluster create`. Every node is stopped again if start-up
 * fails, and when the calling process exits.
 */
export async function startRedisCluster(options: RedisClusterOptions): Promise<LocalRedisCluster> {
  const masters = options.masters ?? 3;
  const replicas = options.replicasPerMaster ?? 1;
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 1_000;
  const { password, tls } = options;
  const admin = <T>(port: number, use: (redis: Redis) => Promise<T>) => withNode(port, use, password, tls);
  const nodes: ClusterNode[] = [];
  const killAll = () => {
    for (const node of nodes) if (!node.exited()) node.process.kill('SIGKILL');
  };
  // A paused node would never answer the administrative commands below.
  const live = (node: ClusterNode) => !node.exited() && !node.paused();
  process.on('exit', killAll);

  const firstLive = () => {
    const node = nodes.find(live);
    if (!node) throw new Error('no node of the cluster is running');
    return node;
  };
  const byAddress = (address: string) => {
    const node = nodes.find((candidate) => candidate.address === address);
    if (!node) throw new Error(`the cluster reports a node this topology did not start: ${address}`);
    return node;
  };
  const roles = async () =>
    parseClusterNodes(
      await admin(firstLive().port, (redis) => redis.call('CLUSTER', 'NODES') as Promise<string>),
    );

  const cluster: LocalRedisCluster = {
    nodes,
    get seeds() {
      return nodes.map((node) => node.address).join(',');
    },
    roles: async () =>
      (await roles()).map(({ address, role, masterAddress, failed }) => ({
        address,
        role,
        ...(masterAddress ? { masterAddress } : {}),
        failed,
      })),
    async masterOf(key) {
      const slot = Number(await admin(firstLive().port, (redis) => redis.call('CLUSTER', 'KEYSLOT', key)));
      const ranges = (await admin(firstLive().port, (redis) => redis.call('CLUSTER', 'SLOTS'))) as [
        number,
        number,
        [string, number, ...unknown[]],
        ...unknown[],
      ][];
      const range = ranges.find(([from, to]) => slot >= from && slot <= to);
      if (!range) throw new Error(`no node serves slot ${slot}`);
      return byAddress(`127.0.0.1:${range[2][1]}`);
    },
    async replicaOf(master) {
      const replica = (await roles()).find(
        (node) => node.role === 'replica' && node.masterAddress === master.address && !node.failed,
      );
      if (!replica) throw new Error(`${master.address} has no live replica`);
      return byAddress(replica.address);
    },
    async waitUntilOk(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      let last = '';
      while (Date.now() < deadline) {
        try {
          const infos = await Promise.all(
            nodes
              .filter(live)
              .map((node) => admin(node.port, (redis) => redis.call('CLUSTER', 'INFO') as Promise<string>)),
          );
          const allOk = infos.every(
            (info) => info.includes('cluster_state:ok') && info.includes('cluster_slots_ok:16384'),
          );
          const servingMasters = (await roles()).filter((node) => node.role === 'master' && node.slots);
          const mastersLive = servingMasters.every((node) => !node.failed && live(byAddress(node.address)));
          if (allOk && mastersLive && servingMasters.length === masters) return;
          last = `${servingMasters.length} serving masters; states ${infos.map((info) => /cluster_state:(\w+)/.exec(info)?.[1]).join(',')}`;
        } catch (error) {
          last = (error as Error).message;
        }
        await sleep(100);
      }
      throw new Error(`the Redis Cluster was not ok within ${timeoutMs} ms: ${last}`);
    },
    async stop() {
      await Promise.all(nodes.map((node) => node.stop('SIGKILL')));
      process.off('exit', killAll);
    },
  };

  try {
    for (let n = 0; n < masters * (1 + replicas); n += 1) {
      // Another process may take a port between the check and the node's bind: a node that
      // exits while it starts is started again on other ports.
      for (let attempt = 1; ; attempt += 1) {
        const port = await nodePort();
        try {
          nodes.push(await startNode(port, join(options.dir, `node-${port}`), nodeTimeoutMs, password, tls));
          break;
        } catch (error) {
          if (attempt >= 3 || !(error instanceof NodeExitedError)) throw error;
        }
      }
    }
    await redisCli([
      ...(password === undefined ? [] : ['-a', password, '--no-auth-warning']),
      ...(tls === undefined ? [] : ['--tls', '--cacert', tls.caFile]),
      '--cluster',
      'create',
      ...nodes.map((node) => node.address),
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    ]);
    await cluster.waitUntilOk();
    // Replicas are ok for the cluster before their first sync has finished; a failover test needs it.
    for (const node of nodes) {
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        const info = await admin(node.port, (redis) => redis.info('replication'));
        if (!info.includes('role:slave') || info.includes('master_link_status:up')) break;
        await sleep(100);
      }
    }
    return cluster;
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}

/**
 * Promotes `replica` (of a cluster without a password) to master with its master's agreement (`CLUSTER FAILOVER`, a planned switch)
 * and resolves once it serves as master; the command itself only starts the switch.
 */
export async function planFailover(replica: ClusterNode, timeoutMs = 10_000): Promise<void> {
  await withNode(replica.port, async (redis) => {
    await redis.call('CLUSTER', 'FAILOVER');
  });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const info = await withNode(replica.port, (redis) => redis.info('replication'));
    if (info.includes('role:master')) return;
    await sleep(50);
  }
  throw new Error(`${replica.address} did not become master within ${timeoutMs} ms`);
}
