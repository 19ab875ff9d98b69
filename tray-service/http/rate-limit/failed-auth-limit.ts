import ipaddr from 'ipaddr.js';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { RedisClient } from '../../../shared/redis/create-redis.ts';

export interface FailedAuthLimitOptions {
  redis: RedisClient;
  /** Failed attempts an address may make per window (AUTH_FAILURE_LIMIT). */
  points: number;
  /** The window, and how long an address over the limit is refused (AUTH_FAILURE_WINDOW_MS). */
  windowMs: number;
  keyPrefix: string;
  /** Epoch ms; tests pin it. */
  now?: () => number;
}

/**
 * Failed authentications (a bad bearer token, an unknown stream ticket, a wrong admin token) per
 * source address. The count lives in Redis, so every API instance shares it; the refusal is kept
 * in memory on each instance that saw it, so a caller in good standing costs no Redis call at all
 * and a blocked address at most one more attempt per instance.
 */
export interface FailedAuthLimit {
  readonly points: number;
  /** Milliseconds this address is still refused on this instance (0: it may try). */
  blockedFor(address: string): number;
  /** Counts one failure; resolves to the milliseconds the address is now refused (0: not yet). */
  failed(address: string): Promise<number>;
}

/**
 * The key of an address: an IPv4 address itself, an IPv6 address by its /64, since one client
 * usually holds a whole /64 and could otherwise take a fresh address for every attempt.
 */
export function addressKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${parsed.toString()}/64`).toString()}/64`;
}

export function createFailedAuthLimit(options: FailedAuthLimitOptions): FailedAuthLimit {
  const now = options.now ?? Date.now;
  const duration = Math.max(1, Math.round(options.windowMs / 1000));
  const limiter = new RateLimiterRedis({
    storeClient: options.redis,
    keyPrefix: options.keyPrefix,
    points: options.points,
    duration,
    // Over the limit: refused for a whole window from the last counted failure.
    blockDuration: duration,
    rejectIfRedisNotReady: true,
    // Redis down: each instance counts on its own until it is back (the limit still holds per instance).
    insuranceLimiter: new RateLimiterMemory({
      keyPrefix: options.keyPrefix,
      points: options.points,
      duration,
      blockDuration: duration,
    }),
  });
  const blockedUntil = new Map<string, number>();

  return {
    points: options.points,
    blockedFor(address) {
      const key = addressKey(address);
      const until = blockedUntil.get(key);
      if (until === undefined) return 0;
      const left = until - now();
      if (left > 0) return left;
      blockedUntil.delete(key);
      return 0;
    },
    async failed(address) {
      const key = addressKey(address);
      try {
        await limiter.consume(key);
        return 0;
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        // Entries go once they lapse (blockedFor) or are swept here, so the map holds only the
        // addresses refused in the last window.
        if (blockedUntil.size > 100_000) {
          for (const [stale, until] of blockedUntil) if (until <= now()) blockedUntil.delete(stale);
        }
        blockedUntil.set(key, now() + rejection.msBeforeNext);
        return rejection.msBeforeNext;
      }
    },
  };
}
