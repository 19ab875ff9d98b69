import type { ConnectionOptions } from 'node:tls';

/** One seed node of a Redis Cluster. */
export interface RedisNodeAddress {
  readonly host: string;
  readonly port: number;
}

/** A Redis Cluster, reached through any of its seed nodes (ioredis discovers the rest). */
export interface RedisClusterTarget {
  readonly clusterNodes: readonly RedisNodeAddress[];
  /** The AUTH every node asks for (an ACL user, or the default user's password), when it asks. */
  readonly auth?: { readonly username?: string; readonly password: string };
  /**
   * TLS to every node (a `rediss://` REDIS_URL), each verified against Node's bundled CAs and
   * NODE_EXTRA_CA_CERTS (tests give their own CA here) for the address the node announces.
   */
  readonly tls?: ConnectionOptions;
}

/**
 * Where the services' Redis is: a `redis://` / `rediss://` URL of one server, or a cluster. Every
 * connection of the product is made from one of these (createRedis, createBullQueue), so a
 * deployment switches to a cluster by configuration alone.
 */
export type RedisTarget = string | RedisClusterTarget;

export const isCluster = (target: RedisTarget): target is RedisClusterTarget => typeof target !== 'string';

/**
 * The hash tag of a key prefix, or undefined. Redis Cluster places a key by the text between its
 * first `{` and the next `}` when that text is not empty, so every key starting with a tagged prefix
 * lands in the same slot: what bull's multi-key scripts and the receiver's enqueue script need.
 */
export function hashTagOf(prefix: string): string | undefined {
  const open = prefix.indexOf('{');
  if (open < 0) return undefined;
  const close = prefix.indexOf('}', open + 1);
  return close > open + 1 ? prefix.slice(open + 1, close) : undefined;
}

/** For logs and error messages: the URL's host, or the seed nodes. */
export function describeRedisTarget(target: RedisTarget): string {
  if (!isCluster(target)) {
    try {
      return new URL(target).host;
    } catch {
      return 'an invalid URL';
    }
  }
  const nodes = target.clusterNodes.map((node) => `${node.host}:${node.port}`).join(',');
  return `cluster ${nodes}${target.tls ? ' over TLS' : ''}`;
}
