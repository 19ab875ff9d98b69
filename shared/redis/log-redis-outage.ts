import type { Logger } from '../logging/create-logger.ts';
import type { RedisClient } from './create-redis.ts';

/**
 * Logs a connection's outage once when it begins and once when it ends, instead of every
 * reconnect attempt's error: a lasting outage then costs two log lines, not one every two
 * seconds per connection. The listener also keeps an 'error' event from crashing the process.
 */
export function logRedisOutage(redis: RedisClient, logger: Logger, connection: string): void {
  let since: number | undefined;
  redis.on('error', (error: Error) => {
    if (since !== undefined) return;
    since = performance.now();
    logger.warn({ connection, err: error.message }, 'redis unreachable; reconnecting with backoff');
  });
  redis.on('ready', () => {
    if (since === undefined) return;
    logger.info({ connection, downForMs: Math.round(performance.now() - since) }, 'redis answers again');
    since = undefined;
  });
}
