import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startRedisCluster,
  type LocalRedisCluster,
  type RedisClusterOptions,
} from '../../scripts/lib/redis-cluster.ts';
import { createRedis, type RedisClient } from '../../shared/redis/create-redis.ts';
import type { RedisClusterTarget } from '../../shared/redis/redis-target.ts';
import { loopbackCertificate } from './loopback-certificate.ts';

export interface RedisClusterFixture {
  readonly cluster: LocalRedisCluster;
  /** The cluster as a Redis target: every node, for `createRedis`, bull and the services. */
  readonly target: RedisClusterTarget;
  /** A temporary directory of the suite's own (the cluster's nodes live in `cluster/` under it). */
  readonly dir: string;
  /** With `tls`: the CA file that verifies the nodes (for NODE_EXTRA_CA_CERTS of a process). */
  readonly caFile: string;
  /** A client on the cluster whose errors are ignored (faults are the point), closed at teardown. */
  readonly connect: (rules?: Parameters<typeof createRedis>[1]) => RedisClient;
  /**
   * Runs `cleanup` at every teardown (register it where the suite is declared), before the clients
   * are closed and the cluster stopped, so queues and caches close while their server still
   * answers. Clean-ups run in reverse order of registration.
   */
  readonly atTeardown: (cleanup: () => unknown) => void;
}

export interface UseRedisClusterOptions extends Omit<RedisClusterOptions, 'dir' | 'tls'> {
  /** A cluster of its own for each test (faults that leave it broken) instead of one per suite. */
  perTest?: boolean;
  /** TLS only, with a loopback certificate of the suite's own (`caFile`; `target` trusts it). */
  tls?: boolean;
}

/**
 * A local Redis Cluster (3 masters with a replica each, unless `options` say otherwise) for the
 * enclosing `describe`, started in a temporary directory and stopped, with every client the suite
 * connected and everything it registered with `atTeardown`, when the suite (or test) ends.
 */
export function useRedisCluster(name: string, options: UseRedisClusterOptions = {}): RedisClusterFixture {
  const { perTest = false, tls = false, ...clusterOptions } = options;
  let dir: string | undefined;
  let caFile: string | undefined;
  let cluster: LocalRedisCluster | undefined;
  let target: RedisClusterTarget | undefined;
  const clients: RedisClient[] = [];
  const cleanups: (() => unknown)[] = [];
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the Redis Cluster is used before its suite started it');
    return value;
  };

  (perTest ? beforeEach : before)(async () => {
    dir = mkdtempSync(join(tmpdir(), `${name}-`));
    const certificate = tls ? loopbackCertificate(dir) : undefined;
    caFile = certificate?.caFile;
    cluster = await startRedisCluster({
      ...clusterOptions,
      dir: join(dir, 'cluster'),
      ...(certificate ? { tls: certificate } : {}),
    });
    target = {
      // A TLS node by the name its certificate holds.
      clusterNodes: cluster.nodes.map((node) => ({
        host: certificate ? 'localhost' : '127.0.0.1',
        port: node.port,
      })),
      ...(certificate ? { tls: { ca: readFileSync(certificate.caFile) } } : {}),
    };
  });
  (perTest ? afterEach : after)(async () => {
    for (const cleanup of [...cleanups].reverse()) await cleanup();
    for (const client of clients.splice(0)) client.disconnect();
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    cluster = undefined;
    target = undefined;
    dir = undefined;
  });

  return {
    get cluster() {
      return started(cluster);
    },
    get target() {
      return started(target);
    },
    get dir() {
      return started(dir);
    },
    get caFile() {
      return started(caFile);
    },
    connect: (rules) => {
      const client = createRedis(started(target), rules);
      client.on('error', () => undefined);
      clients.push(client);
      return client;
    },
    atTeardown: (cleanup) => {
      cleanups.push(cleanup);
    },
  };
}
