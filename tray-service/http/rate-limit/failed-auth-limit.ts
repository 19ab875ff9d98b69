import { RateLimiterRes } from 'rate-limiter-flexible';
import type { Logger } from '../../../shared/logging/create-logger.ts';
import { GuardedRedisLimiter } from './guarded-redis-limiter.ts';
import { addressKey, type FailedAuthLimit } from '../../../shared/http/failed-auth-limit.ts';
import type { RedisClient } from '../../../shared/redis/create-redis.ts';
import { cidrContains, type Cidr } from '../../../shared/address/parse-cidr.ts';
import { parseAddress } from '../../../shared/address/parse-address.ts';

export interface FailedAuthLimitOptions {
  redis: RedisClient;
  /** Failed attempts an address may make per window (AUTH_FAILURE_LIMIT). */
  points: number;
  /** The window, and how long an address over the limit is refused (AUTH_FAILURE_WINDOW_MS). */
  windowMs: number;
  keyPrefix: string;
  /**
   * AUTH_FAILURE_EXEMPT: addresses never counted nor refused (app back ends that relay their users'
   * tokens, where one user's forged tokens would have every user behind them refused).
   */
  exempt?: readonly Cidr[];
  /** Most refusals kept in memory at once (the newest); by default MAX_REFUSED_IN_MEMORY. */
  maxRefused?: number;
  /** Epoch ms; tests pin it. */
  now?: () => number;
  /** Told when a hung Redis has its connection dropped. */
  logger?: Logger;
}

/**
 * Refusals an instance keeps in memory by default: about 10 MB at most. Past it the oldest goes;
 * its address's count in Redis still refuses its next attempt, which puts it back.
 */
export const MAX_REFUSED_IN_MEMORY = 100_000;

/**
 * The tray's limit on failed authentications. The count lives in Redis, so every API instance
 * shares it; the refusal is kept in memory on each instance that saw it, so a caller in good
 * standing costs no Redis call at all and a blocked address at most one more attempt per instance.
 */
export function createFailedAuthLimit(
  options: FailedAuthLimitOptions,
): FailedAuthLimit & { readonly refused: number } {
  const maxRefused = options.maxRefused ?? MAX_REFUSED_IN_MEMORY;
  const now = options.now ?? Date.now;
  const duration = Math.max(1, Math.round(options.windowMs / 1000));
  // Over the limit: refused for a whole window from the last counted failure. Redis down or
  // hanging: each instance counts on its own until it is back (the limit still holds per instance).
  const limiter = new GuardedRedisLimiter({
    redis: options.redis,
    keyPrefix: options.keyPrefix,
    points: options.points,
    duration,
    blockDuration: duration,
    ...(options.logger ? { logger: options.logger } : {}),
  });
  // Insertion order is the order the refusals were made (a refusal made again is re-inserted), and
  // each lasts about a window, so the front holds the oldest and, nearly always, the first to lapse
  // (one that lapses behind a longer one goes when asked for, or when it reaches the front).
  const blockedUntil = new Map<string, number>();
  const makeRoom = (at: number) => {
    for (const [key, until] of blockedUntil) {
      if (blockedUntil.size < maxRefused && until > at) return;
      blockedUntil.delete(key);
    }
  };
  const exempt = options.exempt ?? [];
  const isExempt = (address: string) => {
    if (exempt.length === 0) return false;
    const parsed = parseAddress(address);
    return parsed !== undefined && exempt.some((range) => cidrContains(range, parsed));
  };

  return {
    points: options.points,
    get refused() {
      return blockedUntil.size;
    },
    blockedFor(address) {
      // Asked on every request: with no address refused (the usual case), no address is parsed.
      if (blockedUntil.size === 0) return 0;
      // Asked apart from the key: an IPv6 address is counted by its /64, whose other addresses may
      // be refused while this one, exempt, never is.
      if (isExempt(address)) return 0;
      const key = addressKey(address);
      const until = blockedUntil.get(key);
      if (until === undefined) return 0;
      const left = until - now();
      if (left > 0) return left;
      blockedUntil.delete(key);
      return 0;
    },
    async failed(address) {
      // Never counted, so never in blockedUntil: refused by no instance either.
      if (isExempt(address)) return 0;
      const key = addressKey(address);
      try {
        await limiter.consume(key);
        return 0;
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        // Entries go once they lapse (blockedFor, or from the front here), or, at maxRefused, the
        // oldest: each entry is dropped once, so a refusal costs the same however many are kept.
        const at = now();
        blockedUntil.delete(key);
        makeRoom(at);
        blockedUntil.set(key, at + rejection.msBeforeNext);
        return rejection.msBeforeNext;
      }
    },
  };
}
