import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
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

/** How far apart two readings of one memory window's end may be (each is its expiry less now). */
const SAME_WINDOW_SLACK_MS = 50;

/**
 * A count per key in Redis, shared by every API instance, that falls back to a count in this
 * process's memory while Redis is not there: not ready, failing, and also hanging. A Redis that
 * stops answering but keeps its connection (a stopped server, a route that died without a reset)
 * stays `ready`, so every count waited on it for as long as it hung, and with it every tray call,
 * piling up in memory. A count is now given REDIS_CALL_BUDGET_MS; past it, and while any call on
 * the connection is still unanswered, calls count in memory at once; a call unanswered for REDIS_RECONNECT_AFTER_MS has the connection dropped (the
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
      // No insuranceLimiter: it would count in memory again a call this class already counted
      // there when its Redis count ran out of its budget and later failed (the connection dropped
      // under it). consume below makes every fallback itself.
      rejectIfRedisNotReady: true,
    });
    this.#memory = memory;
    this.#guarded = guardedRedis(redis, options.logger);
  }

  /**
   * Counts the call in Redis, or, when Redis is not ready, fails or runs out of its budget, in
   * memory: in one of the two only. A count in Redis that ran out of its budget is still out and
   * may yet be made (Redis answers late, over the limit or not): the memory count made meanwhile is
   * then given back.
   */
  override async consume(
    key: string | number,
    pointsToConsume = 1,
    options: Record<string, unknown> = {},
  ): Promise<RateLimiterRes> {
    let sent: Promise<RateLimiterRes> | undefined;
    try {
      return await this.#guarded(() => (sent = super.consume(key, pointsToConsume, options)));
    } catch (error) {
      // Over the limit in Redis: the count was made there.
      if (error instanceof RateLimiterRes) throw error;
      const countedAt = Date.now();
      const inMemory = this.#memory.consume(key, pointsToConsume, options);
      if (sent && isUnanswered(error)) {
        // The window the memory count went into ends msBeforeNext after it, over the limit or not.
        const made = () =>
          inMemory
            .catch((over: unknown) => (over instanceof RateLimiterRes ? over : undefined))
            .then((res) => res && this.#giveBack(key, pointsToConsume, countedAt + res.msBeforeNext))
            .catch(() => undefined);
        sent.then(made, (late: unknown) => (late instanceof RateLimiterRes ? made() : undefined));
      }
      return inMemory;
    }
  }

  /**
   * Takes back `points` counted in memory in the window ending at `windowEnd` (epoch ms), unless
   * that window has ended meanwhile: a point of the next window is another call's.
   */
  async #giveBack(key: string | number, points: number, windowEnd: number): Promise<void> {
    const counted = await this.#memory.get(key);
    if (!counted || counted.msBeforeNext <= 0 || counted.consumedPoints < points) return;
    if (Math.abs(Date.now() + counted.msBeforeNext - windowEnd) > SAME_WINDOW_SLACK_MS) return;
    await this.#memory.reward(key, points);
  }
}
