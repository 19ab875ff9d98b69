import type Bull from 'bull';
import { Cluster } from 'ioredis';
import type { RedisClient } from '../../../shared/redis/create-redis.ts';

/** The workers connected to a queue: how many there are, or why Redis would not say. */
export type QueueWorkers = { count: number } | { unknown: string };

/** The `name=` field of one CLIENT LIST line (a client name holds no space). */
const clientName = (line: string) => /(?:^| )name=(\S*)/.exec(line)?.[1];

/**
 * The workers reading `queue` (of key prefix `prefix`): bull names each worker's blocking
 * connection `<prefix>:<queue name in base64>` with CLIENT SETNAME, as its getWorkers reads them.
 * That getWorkers asks one server, on a cluster a node at random, while the name is on the node
 * the worker's CLIENT SETNAME went to: every node is asked here. A worker whose Redis user may not
 * run CLIENT is unnamed, so not counted.
 */
export async function queueWorkers(queue: Bull.Queue, prefix: string): Promise<QueueWorkers> {
  const name = `${prefix}:${Buffer.from(queue.name).toString('base64')}`;
  // bull's types say a server; createBullQueue connects it to a cluster for REDIS_CLUSTER_NODES.
  const client = queue.client as RedisClient;
  const servers = client instanceof Cluster ? client.nodes('all') : [client];
  let count = 0;
  let refused: string | undefined;
  for (const server of servers) {
    try {
      const list = await server.call('CLIENT', 'LIST');
      count += String(list)
        .split('\n')
        .filter((line) => clientName(line) === name).length;
    } catch (error) {
      refused ??= error instanceof Error ? error.message : String(error);
    }
  }
  return count > 0 || refused === undefined ? { count } : { unknown: refused };
}
