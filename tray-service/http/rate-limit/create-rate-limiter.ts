import type { RedisClient } from '../../../shared/redis/create-redis.ts';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Logger } from '../../../shared/logging/create-logger.ts';
import { GuardedRedisLimiter } from './guarded-redis-limiter.ts';

export interface RateLimiterOptions {
  redis: RedisClient;
  /** Calls per user per window (docs/contract.md#limits: 100 per 5 s). */
  points: number;
  windowMs: number;
  keyPrefix: string;
  /** Told when a hung Redis has its connection dropped. */
  logger?: Logger;
}

/**
 * One counter per user in Redis, so every API instance shares the limit. While Redis is not
 * ready, or hangs (GuardedRedisLimiter), the limit falls back to an in-process counter per
 * instance (the API keeps serving; the effective limit is then per instance until Redis is back).
 */
export function createRateLimiter(options: RateLimiterOptions): RateLimiterAbstract {
  const duration = Math.max(1, Math.round(options.windowMs / 1000));
  return new GuardedRedisLimiter({
    redis: options.redis,
    keyPrefix: options.keyPrefix,
    points: options.points,
    duration,
    ...(options.logger ? { logger: options.logger } : {}),
  });
}
