import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from './create-redis.ts';
import type { Logger } from '../logging/create-logger.ts';

/**
 * The problem with a Redis whose `maxmemory-policy` (from `INFO memory`) is not `noeviction`, as one
 * operator-readable line, or undefined when the policy is safe or not reported. Any other policy lets
 * Redis delete keys under memory pressure: queued events, bull's job hashes and dedupe marks would
 * vanish without an error (bull's documented requirement; RELIABILITY.md).
 */
export function evictionProblem(info: string): string | undefined {
  const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
  if (policy === undefined || policy === 'noeviction') return undefined;
  return (
    `Redis maxmemory-policy is "${policy}", which may evict queued events; ` +
    'run CONFIG SET maxmemory-policy noeviction (and set it in redis.conf), then restart'
  );
}

export interface RefuseEvictingRedisOptions {
  logger?: Pick<Logger, 'warn'>;
  /** How long start-up waits for a first connection; a receiver must start while Redis is down. */
  startupWaitMs?: number;
  /** Called with the one-line message; the default writes it to stderr and exits with code 1. */
  onEvicting?: (message: string) => void;
}

function exitWithMessage(message: string): void {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

/**
 * Checks the eviction policy whenever `redis` (re)connects: at start-up (waiting at most
 * `startupWaitMs` for a connection, so start-up is refused before anything is accepted) and after
 * every reconnect, since a restarted or failed-over Redis may come back with another config.
 * A server that does not report the policy, or refuses INFO, is logged and accepted.
 *
 * On a cluster every master is checked, each with its own INFO (a cluster-wide INFO would answer
 * from one node only), and again whenever the slot map changes: a promoted replica is a new
 * master with a config of its own.
 */
export async function refuseEvictingRedis(
  redis: RedisClient,
  options: RefuseEvictingRedisOptions = {},
): Promise<void> {
  const onEvicting = options.onEvicting ?? exitWithMessage;
  let latest: Promise<void> | undefined;
  const checkOne = async (node: Redis, where: string) => {
    let info: string;
    try {
      info = await node.info('memory');
    } catch (error) {
      options.logger?.warn(
        { err: (error as Error).message, node: where },
        'could not read the Redis eviction policy',
      );
      return false;
    }
    if (!/^maxmemory_policy:/m.test(info)) {
      options.logger?.warn(
        { node: where },
        'Redis does not report maxmemory_policy; make sure it never evicts keys',
      );
    }
    const problem = evictionProblem(info);
    if (problem !== undefined) onEvicting(where === '' ? problem : `${problem} (master ${where})`);
    return true;
  };
  // Masters already checked; forgotten when the cluster drops a node, so a node that comes
  // back (possibly restarted with another config) is checked again.
  const checked = new Set<string>();
  const check = async () => {
    if (!(redis instanceof Cluster)) {
      await checkOne(redis, '');
      return;
    }
    await Promise.all(
      redis.nodes('master').map(async (node) => {
        const where = `${node.options.host}:${node.options.port}`;
        if (checked.has(where)) return;
        // Claimed before the INFO: 'ready' and 'refresh' often fire together at start-up.
        checked.add(where);
        if (!(await checkOne(node, where))) checked.delete(where);
      }),
    );
  };
  // Start-up waits for every check started so far, not only the newest one.
  const recheck = () => {
    latest = Promise.all([latest, check()]).then(() => undefined);
  };
  redis.on('ready', recheck);
  if (redis instanceof Cluster) {
    redis.on('refresh', recheck);
    redis.on('-node', (node: Redis) => checked.delete(`${node.options.host}:${node.options.port}`));
  }
  if (redis.status === 'ready') recheck();
  else {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, options.startupWaitMs ?? 3_000);
      function done() {
        clearTimeout(timer);
        redis.off('ready', done);
        resolve();
      }
      redis.once('ready', done);
    });
  }
  await latest;
}
