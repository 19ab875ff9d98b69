import { z } from 'zod';
import { hashTagOf, type RedisClusterTarget, type RedisTarget } from '../redis/redis-target.ts';
import { logLevel, parsedWith, PASSWORD_NOT_SPLIT, url } from './env-types.ts';
import { parseClusterNodes } from './parse-cluster-nodes.ts';
import { ConfigError } from '../errors/config-error.ts';

/** Variables both services read. */
export const commonShape = {
  REDIS_URL: url(['redis', 'rediss'], 'redis://127.0.0.1:6379').refine(...PASSWORD_NOT_SPLIT),
  /** Seed nodes of a Redis Cluster; when set, REDIS_URL gives only their credentials (withRedisTarget). */
  REDIS_CLUSTER_NODES: parsedWith(parseClusterNodes).optional(),
  /**
   * Prefix of every bull key in Redis: the queues of several deployments (or test suites) on one
   * Redis; the tray's other prefixes must differ too (docs/configuration.md). Braces are allowed
   * for a cluster's hash tag, e.g. `{bull}`.
   */
  QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_{}-]{1,63}$/, { error: 'expected 1-63 letters, digits, "_", "-", "{" or "}"' })
    .default('bull'),
  LOG_LEVEL: logLevel,
};

/** The variables naming the queue's Redis, for a tool that reads only those (withRedisTarget). */
export const queueRedisShape = {
  REDIS_URL: commonShape.REDIS_URL,
  REDIS_CLUSTER_NODES: commonShape.REDIS_CLUSTER_NODES,
  QUEUE_PREFIX: commonShape.QUEUE_PREFIX,
};

/**
 * Adds `redis`, the one Redis target every connection is made from: the cluster when
 * REDIS_CLUSTER_NODES is set, otherwise REDIS_URL. On a cluster, QUEUE_PREFIX must carry a hash
 * tag: bull's scripts and the receiver's enqueue script touch several keys at once, which a
 * cluster only allows within one slot (otherwise every enqueue fails with CROSSSLOT).
 */
export function withRedisTarget<C extends { REDIS_URL: string; QUEUE_PREFIX: string }>(
  config: C & { REDIS_CLUSTER_NODES?: readonly { host: string; port: number }[] | undefined },
): C & { redis: RedisTarget } {
  const nodes = config.REDIS_CLUSTER_NODES;
  if (nodes === undefined) return { ...config, redis: checkedServerUrl(config.REDIS_URL) };
  if (hashTagOf(config.QUEUE_PREFIX) === undefined) {
    throw new ConfigError([
      {
        variable: 'QUEUE_PREFIX',
        message:
          `"${config.QUEUE_PREFIX}" has no hash tag, which a Redis Cluster (REDIS_CLUSTER_NODES) needs ` +
          `so each queue's keys share one slot; use e.g. "{${config.QUEUE_PREFIX.replace(/[{}]/g, '') || 'bull'}}"`,
      },
    ]);
  }
  return { ...config, redis: { clusterNodes: nodes, ...clusterAccess(config.REDIS_URL) } };
}

/**
 * On a cluster, REDIS_URL gives the nodes' credentials and whether to reach them over TLS only
 * (its host is not used): the one place the Redis password lives, whichever the topology. A
 * `rediss://` URL makes every node connection TLS, verified against Node's bundled CAs and
 * NODE_EXTRA_CA_CERTS (docs/redis-cluster.md).
 */
function clusterAccess(redisUrl: string): Pick<RedisClusterTarget, 'auth' | 'tls'> {
  const url = new URL(redisUrl);
  // A cluster has database 0 only: a `/2` meant to keep deployments apart was dropped unsaid, and
  // theirs mixed. QUEUE_PREFIX (and the other prefixes) keep them apart there.
  if (!/^\/?0?$/.test(url.pathname) || !['0', null].includes(url.searchParams.get('db'))) {
    throw new ConfigError([
      {
        variable: 'REDIS_URL',
        message:
          'names a database index, which a Redis Cluster (REDIS_CLUSTER_NODES) does not have (database 0 only): ' +
          'drop it, and keep deployments apart with QUEUE_PREFIX',
      },
    ]);
  }
  const tls = url.protocol === 'rediss:' ? { tls: {} } : {};
  // A user with no password sends no AUTH, as for a single server.
  if (url.password === '') return tls;
  // Both decode: url() refused REDIS_URL otherwise (userinfoDecodes).
  const password = decodeURIComponent(url.password);
  const username = decodeURIComponent(url.username);
  return { ...tls, auth: username === '' ? { password } : { username, password } };
}

/**
 * A single server's REDIS_URL, as ioredis will read it when it connects (its credentials decode:
 * url() checked them): its path, when any, must be a database index, and so must its `db` option (ioredis takes one that is not, such as `/abc` or
 * `?db=abc`, as database 0).
 */
function checkedServerUrl(redisUrl: string): string {
  const url = new URL(redisUrl);
  const noIndex = (where: string) =>
    new ConfigError([
      { variable: 'REDIS_URL', message: `${where} names no database index: write /0, /1, ... or none` },
    ]);
  // An "@" after the host is a password's rest: one holding a "/" or "?" not escaped ends the host
  // early and the rest of it is read as the path, query or fragment. Then no part is printed.
  const split = `${url.pathname}${url.search}${url.hash}`.includes('@');
  const shown = (part: string, value: string) =>
    split
      ? `its ${part} holds an "@": a password's "/" or "?" must be escaped (write "/" as %2F, "?" as %3F), and its ${part}`
      : `its ${part} ("${value}")`;
  if (!/^\/?(\d{1,5})?$/.test(url.pathname)) throw noIndex(shown('path', url.pathname));
  const db = url.searchParams.get('db');
  if (db !== null && !/^\d{1,5}$/.test(db)) throw noIndex(shown('db option', db));
  // ioredis turns TLS on only for a lower-case "rediss://"; the URL parser took any case.
  return redisUrl.replace(/^[a-z]+:/i, (scheme) => scheme.toLowerCase());
}
