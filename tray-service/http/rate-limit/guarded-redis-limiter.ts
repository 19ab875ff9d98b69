import { RateLimiterMemory, RateLimiterRedis, type RateLimiterRes } from 'rate-limiter-flexible';
import { TimeoutError } from '../../../shared/errors/timeout-error.ts';
import type { Logger } from '../../../shared/logging/create-logger.ts';
import type { RedisClient } from '../../../shared/redis/create-redis.ts';
import { dropConnection } from '../../../shared/redis/drop-connection.ts';
import {
  createHungRedisBreaker,
  RedisUnansweredError,
  type HungRedisBreaker,
} from '../../../shared/redis/hung-redis-breaker.ts';

/** How long a count may wait for Redis before the call is counted in memory instead. */
export const LIMITER_BUDGET_MS = 1_000;
/** How long a count may stay unanswered before the connection is dropped and made again. */
export const LIMITER_RECONNECT_AFTER_MS = 5_000;

/** One breaker per connection: every limiter on it sees the same hang. */
const breakers = new WeakMap<RedisClient, HungRedisBreaker>();

function breakerFor(redis: RedisClient, logger: Logger | undefined): HungRedisBreaker {
  let breaker = breakers.get(redis);
  if (!breaker) {
    breaker = createHungRedisBreaker({
      reconnectAfterMs: LIMITER_RECONNECT_AFTER_MS,
      reconnect: () => {
        logger?.warn(
          'Redis left a rate-limit count unanswered too long; dropping the connection and connecting again',
        );
        dropConnection(redis);
      },
    });
    breakers.set(redis, breaker);
  }
  return breaker;
}

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
 * hung, and with it every tray call, piling up in memory. A count is now given LIMITER_BUDGET_MS;
 * past it, and while any count is still unanswered, calls count in memory at once; a count
 * unanswered for LIMITER_RECONNECT_AFTER_MS has the connection dropped (the receiver's breaker,
 * shared/redis/hung-redis-breaker.ts), after which the limiter counts in memory until the new
 * connection is ready.
 */
export class GuardedRedisLimiter extends RateLimiterRedis {
  readonly #memory: RateLimiterMemory;
  readonly #breaker: HungRedisBreaker;

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
    this.#breaker = breakerFor(redis, options.logger);
  }

  override consume(
    key: string | number,
    pointsToConsume?: number,
    options?: Record<string, unknown>,
  ): Promise<RateLimiterRes> {
    return this.#breaker
      .call(() => super.consume(key, pointsToConsume, options), LIMITER_BUDGET_MS)
      .catch((error: unknown) => {
        if (error instanceof TimeoutError || error instanceof RedisUnansweredError) {
          return this.#memory.consume(key, pointsToConsume, options);
        }
        throw error;
      });
  }
}
