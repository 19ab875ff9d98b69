import type { RedisClient } from '../../shared/redis/create-redis.ts';
import { watchRedisNodes } from '../../shared/redis/watch-redis-nodes.ts';
import type { Logger } from '../../shared/logging/create-logger.ts';

const fix = 'set appendonly yes and appendfsync always (CONFIG SET, and in redis.conf)';

/**
 * Why a Redis with these settings (`CONFIG GET *append*`, as a name-to-value map) may lose events the
 * receiver acknowledged, as one operator-readable line, or undefined when it keeps them.
 *
 * The receiver answers 200 once the enqueue script's reply arrives. Only with `appendfsync always`
 * does Redis write (and fsync) its append-only file before it sends that reply. With `everysec`,
 * Redis postpones the write while the previous second's fsync still runs (up to 2 s on a busy
 * disk) and answers meanwhile, so a Redis process killed then loses writes it already answered:
 * reproduced here, tens of acknowledged writes lost per kill (RELIABILITY.md, "Redis durability").
 * With `no-appendfsync-on-rewrite yes`, Redis skips the fsync while a child saves or rewrites: its
 * writes still reach the OS before the reply, so only a power loss or an OS crash then loses them.
 */
export function persistenceProblem(settings: ReadonlyMap<string, string>): string | undefined {
  const appendonly = settings.get('appendonly');
  const appendfsync = settings.get('appendfsync');
  if (appendonly !== undefined && appendonly !== 'yes') {
    return `Redis keeps no append-only file (appendonly ${appendonly}): a Redis restart or crash loses acknowledged events still queued; ${fix}`;
  }
  if (appendfsync !== undefined && appendfsync !== 'always') {
    return `Redis appendfsync is "${appendfsync}": Redis may answer an enqueue before writing it to disk, so a Redis crash can lose acknowledged events; ${fix}`;
  }
  if (settings.get('no-appendfsync-on-rewrite') === 'yes') {
    return 'Redis no-appendfsync-on-rewrite is yes: while it saves a snapshot or rewrites its append-only file, Redis answers before the fsync, so a power loss or an OS crash then can lose acknowledged events; set no-appendfsync-on-rewrite no (CONFIG SET, and in redis.conf)';
  }
  return undefined;
}

export interface WarnVolatileRedisOptions {
  logger: Pick<Logger, 'warn'>;
  /** How long start-up waits for a first connection (the receiver starts while Redis is down). */
  startupWaitMs?: number;
}

/**
 * Logs a warning whenever the receiver's Redis (each master of a cluster) is found, at start-up or
 * after a reconnect, to run with settings that may lose acknowledged events. A warning, not a
 * refusal: managed services may not offer `appendfsync always` (a replica fence is then what
 * protects against a master's loss, docs/redis-cluster.md), and refusing to start would lose more.
 */
export async function warnVolatileRedis(
  redis: RedisClient,
  options: WarnVolatileRedisOptions,
): Promise<void> {
  const { logger } = options;
  await watchRedisNodes(
    redis,
    async (node, where) => {
      // One pattern (Redis 6 takes no more) that matches no-appendfsync-on-rewrite too.
      const flat = (await node.config('GET', '*append*')) as string[];
      const settings = new Map<string, string>();
      for (let i = 0; i + 1 < flat.length; i += 2) settings.set(String(flat[i]), String(flat[i + 1]));
      const problem = persistenceProblem(settings);
      if (problem !== undefined) logger.warn({ node: where }, problem);
    },
    (error, where) =>
      logger.warn(
        { err: error.message, node: where },
        'could not read the Redis persistence settings; make sure Redis runs appendonly yes and appendfsync always',
      ),
    { startupWaitMs: options.startupWaitMs },
  );
}
