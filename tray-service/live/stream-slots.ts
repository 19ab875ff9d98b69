import type { RedisClient } from '../../shared/redis/create-redis.ts';

/**
 * An open stream holds a lease in its user's sorted set (member: stream id, score: lease end).
 * One script trims expired leases, counts and adds, so two instances opening the user's last free
 * slot at once cannot both take it. A crashed instance's leases lapse after LEASE_MS.
 */
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`;

/**
 * Only open streams are renewed (the hub renews those it holds), so a lease that lapsed while its
 * stream stayed open (Redis out of reach for longer than a lease, or restarted without its data) is
 * added again: otherwise that stream would no longer count, and STREAMS_PER_USER would stop holding.
 */
const RENEW = `
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`;

export interface StreamSlots {
  readonly limit: number;
  /** Takes one of the user's STREAMS_PER_USER slots; false when all are held. */
  acquire(userId: string, streamId: string): Promise<boolean>;
  /** Extends the lease of an open stream (every heartbeat), taking it again if it lapsed. */
  renew(userId: string, streamId: string): Promise<void>;
  release(userId: string, streamId: string): Promise<void>;
}

export interface StreamSlotOptions {
  prefix: string;
  limit: number;
  /** How long a lease lives without renewal: a few heartbeats. */
  leaseMs: number;
  now?: () => number;
}

export function createStreamSlots(redis: RedisClient, options: StreamSlotOptions): StreamSlots {
  const now = options.now ?? Date.now;
  const key = (userId: string) => `${options.prefix}:streams:${userId}`;
  return {
    limit: options.limit,
    async acquire(userId, streamId) {
      const at = now();
      const taken = await redis.eval(
        ACQUIRE,
        1,
        key(userId),
        String(at),
        String(at + options.leaseMs),
        String(options.limit),
        streamId,
        String(options.leaseMs),
      );
      return taken === 1;
    },
    async renew(userId, streamId) {
      await redis.eval(
        RENEW,
        1,
        key(userId),
        String(now() + options.leaseMs),
        streamId,
        String(options.leaseMs),
      );
    },
    async release(userId, streamId) {
      await redis.zrem(key(userId), streamId);
    },
  };
}
