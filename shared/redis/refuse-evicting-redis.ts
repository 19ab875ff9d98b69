import type { Redis } from 'ioredis';
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
 */
export async function refuseEvictingRedis(
  redis: Redis,
  options: RefuseEvictingRedisOptions = {},
): Promise<void> {
  const onEvicting = options.onEvicting ?? exitWithMessage;
  let latest: Promise<void> | undefined;
  const check = async () => {
    let info: string;
    try {
      info = await redis.info('memory');
    } catch (error) {
      options.logger?.warn({ err: (error as Error).message }, 'could not read the Redis eviction policy');
      return;
    }
    if (!/^maxmemory_policy:/m.test(info)) {
      options.logger?.warn('Redis does not report maxmemory_policy; make sure it never evicts keys');
    }
    const problem = evictionProblem(info);
    if (problem !== undefined) onEvicting(problem);
  };
  redis.on('ready', () => {
    latest = check();
  });
  if (redis.status === 'ready') latest = check();
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
