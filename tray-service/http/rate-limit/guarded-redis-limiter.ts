import { RateLimiterMemory, RateLimiterRedis, type RateLimiterRes } from 'rate-limiter-flexible';
import type { Logger } from '../../../shared/logging/create-logger.ts';
import type { RedisClient } from '../../../shared/redis/create-redis.ts';
import { guardedRedis, isUnanswered } from '../../../shared/redis/hung-redis-breaker.ts';

export interface GuardedRedisLimiterOptions {
  redis: RedisClient;
  keyPrefix: string;
  points: number;
  /** Seconds. */
  duration: number;
  /** Seconds an address over the limit stays refused; none: until the window ends. */
  blockDuration?: number;
  logger?: Logger;
}

/**
 * A count per key in Redis, shared by every API instance, that falls back to a count in this
 * process's memory while Redis is not there: not ready (rate-limiter-flexible's own insurance),
 * and also hanging. A Redis that stops answering but keeps its connection (a stopped server, a
 * route that died without a reset) stays `ready`, so every count waited on it for as long as it
 * hung, and with it every tray call, piling up in memory. A count is now given REDIS_CALL_BUDGET_MS;
 * past it, and while any call on the connection is still unanswered, calls count in memory at
 * once; a call unanswered for REDIS_RECONNECT_AFTER_MS has the connection dropped (the
 * connection's breaker, shared/redis/hung-redis-breaker.ts), after which the limiter counts in
 * memory until the new connection is ready.
 */
export class GuardedRedisLimiter extends RateLimiterRedis {
  readonly #memory: RateLimiterMemory;
  readonly #guarded: ReturnType<typeof guardedRedis>;

  constructor(options: GuardedRedisLimiterOptions) {
    const { redis, keyPrefix, points, duration, blockDuration } = options;
    const memory = new RateLimiterMemory({
      keyPrefix,
      points,
      duration,
      ...(blockDuration === undefined ? {} : { blockDuration }),
    });
    super({
      storeClient: redis,
      keyPrefix,
      points,
      duration,
      ...(blockDuration === undefined ? {} : { blockDuration }),
      rejectIfRedisNotReady: true,
      insuranceLimiter: memory,
    });
    this.#memory = memory;
    this.#guarded = guardedRedis(redis, options.logger);
  }

  override consume(
    key: string | number,
    pointsToConsume?: number,
    options?: Record<string, unknown>,
  ): Promise<RateLimiterRes> {
    return this.#guarded(() => super.consume(key, pointsToConsume, options)).catch((error: unknown) => {
      if (isUnanswered(error)) {
        return this.#memory.consume(key, pointsToConsume, options);
      }
      throw error;
    });
  }
}
