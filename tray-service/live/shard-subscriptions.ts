import type { Logger } from '../../shared/logging/create-logger.ts';
import { cappedExponentialDelay } from '../../shared/queue/capped-exponential-backoff.ts';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import { changeChannel, shardOf } from './change-channels.ts';

/** The first wait before a failed subscription is tried again, and the longest. */
export const SUBSCRIBE_RETRY = { firstMs: 1_000, maxMs: 30_000 } as const;

/** The shard channels an instance listens to: those of the users it holds streams for. */
export interface ShardSubscriptions {
  /** A user's first stream opened here; resolves once the user's channel is subscribed. */
  addUser(userId: string): Promise<void>;
  /** Resolves once the user's channel is subscribed (or the attempt failed). */
  ready(userId: string): Promise<void>;
  /**
   * Whether Redis refused the user's channel and it waits to be tried again: changes published
   * meanwhile reach no stream of the user here, as while the connection is down.
   */
  refused(userId: string): boolean;
  /** A user's last stream closed here: the channel is dropped when no other user needs it. */
  removeUser(userId: string): void;
  /**
   * Subscribes every channel in use again (after a reconnect) and waits for it; drops the channels
   * whose unsubscribe failed meanwhile.
   */
  renew(): Promise<void>;
  /** Shutdown: no more unsubscribes or retries, the connection is about to close. */
  stop(): void;
}

/**
 * `retry(shard, resubscribe)`: a subscription Redis refused with the connection up (an ACL without
 * the channel, say) is tried again after a capped, doubling wait, while the shard is in use, by
 * calling `resubscribe` through this hook: the hub holds the shard's streams' live changes first,
 * and catches them up on what they missed once it answers true. (A refusal while the connection is
 * down is the reconnect's: every subscription is renewed then.)
 */
export function createShardSubscriptions(
  subscriber: RedisClient,
  prefix: string,
  logger: Logger,
  retry: (shard: number, resubscribe: () => Promise<boolean>) => void = (_shard, resubscribe) =>
    void resubscribe(),
): ShardSubscriptions {
  const usersPerShard = new Map<number, number>();
  const subscribed = new Map<number, Promise<void>>();
  /** The retry timers of the shards whose subscription was refused. */
  const retries = new Map<number, NodeJS.Timeout>();
  /**
   * Shards no stream here uses whose unsubscribe failed (Redis was down): ioredis keeps such a
   * channel and subscribes it again on the new connection, and nothing would drop it; every change
   * of the shard's users (a community's fan-out) would keep coming here. renew() drops them.
   */
  const leftOver = new Set<number>();
  let stopped = false;

  const cancelRetry = (shard: number) => {
    clearTimeout(retries.get(shard));
    retries.delete(shard);
  };

  /** Subscribes the shard's channel; true once it took. `failures`: refusals before this one. */
  function attempt(shard: number, failures = 0): Promise<boolean> {
    cancelRetry(shard);
    const done: Promise<boolean> = subscriber.subscribe(changeChannel(prefix, shard)).then(
      () => {
        if (failures > 0) logger.info({ shard }, 'live change subscription taken again');
        return true;
      },
      (error: unknown) => {
        // Redis is down: the streams stay open and catch up when the subscriber is ready again.
        if (failures === 0)
          logger.warn({ err: (error as Error).message, shard }, 'live change subscription failed');
        const current = subscribed.get(shard) === settled;
        if (stopped || !current || !usersPerShard.has(shard) || subscriber.status !== 'ready') return false;
        const timer = setTimeout(
          () => {
            retries.delete(shard);
            if (!stopped && usersPerShard.has(shard) && subscribed.get(shard) === settled)
              retry(shard, () => attempt(shard, failures + 1));
          },
          cappedExponentialDelay(failures + 1, SUBSCRIBE_RETRY),
        );
        timer.unref();
        retries.set(shard, timer);
        return false;
      },
    );
    const settled = done.then(() => undefined);
    subscribed.set(shard, settled);
    return done;
  }

  const subscribe = (shard: number): Promise<void> => attempt(shard).then(() => undefined);

  function unsubscribe(shard: number): void {
    leftOver.delete(shard);
    subscriber.unsubscribe(changeChannel(prefix, shard)).catch(() => {
      if (!usersPerShard.has(shard)) leftOver.add(shard);
    });
  }

  return {
    addUser(userId) {
      const shard = shardOf(userId);
      const users = usersPerShard.get(shard) ?? 0;
      usersPerShard.set(shard, users + 1);
      leftOver.delete(shard);
      return users === 0 ? subscribe(shard) : (subscribed.get(shard) ?? Promise.resolve());
    },
    ready: (userId) => subscribed.get(shardOf(userId)) ?? Promise.resolve(),
    refused: (userId) => retries.has(shardOf(userId)),
    removeUser(userId) {
      const shard = shardOf(userId);
      const users = (usersPerShard.get(shard) ?? 1) - 1;
      if (users > 0) {
        usersPerShard.set(shard, users);
        return;
      }
      usersPerShard.delete(shard);
      subscribed.delete(shard);
      cancelRetry(shard);
      if (!stopped) unsubscribe(shard);
    },
    async renew() {
      for (const shard of leftOver) unsubscribe(shard);
      await Promise.all([...usersPerShard.keys()].map((shard) => subscribe(shard)));
    },
    stop() {
      stopped = true;
      for (const shard of [...retries.keys()]) cancelRetry(shard);
    },
  };
}
