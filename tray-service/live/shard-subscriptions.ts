import type { Logger } from '../../shared/logging/create-logger.ts';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import { changeChannel, shardOf } from './change-channels.ts';

/** The shard channels an instance listens to: those of the users it holds streams for. */
export interface ShardSubscriptions {
  /** A user's first stream opened here; resolves once the user's channel is subscribed. */
  addUser(userId: string): Promise<void>;
  /** Resolves once the user's channel is subscribed (or the attempt failed). */
  ready(userId: string): Promise<void>;
  /** A user's last stream closed here: the channel is dropped when no other user needs it. */
  removeUser(userId: string): void;
  /** Subscribes every channel in use again (after a reconnect) and waits for it. */
  renew(): Promise<void>;
  /** Shutdown: no more unsubscribes, the connection is about to close. */
  stop(): void;
}

export function createShardSubscriptions(
  subscriber: RedisClient,
  prefix: string,
  logger: Logger,
): ShardSubscriptions {
  const usersPerShard = new Map<number, number>();
  const subscribed = new Map<number, Promise<void>>();
  let stopped = false;

  function subscribe(shard: number): Promise<void> {
    const done = subscriber.subscribe(changeChannel(prefix, shard)).then(
      () => undefined,
      (error: unknown) => {
        // Redis is down: the streams stay open and catch up when the subscriber is ready again.
        logger.warn({ err: (error as Error).message, shard }, 'live change subscription failed');
      },
    );
    subscribed.set(shard, done);
    return done;
  }

  return {
    addUser(userId) {
      const shard = shardOf(userId);
      const users = usersPerShard.get(shard) ?? 0;
      usersPerShard.set(shard, users + 1);
      return users === 0 ? subscribe(shard) : (subscribed.get(shard) ?? Promise.resolve());
    },
    ready: (userId) => subscribed.get(shardOf(userId)) ?? Promise.resolve(),
    removeUser(userId) {
      const shard = shardOf(userId);
      const users = (usersPerShard.get(shard) ?? 1) - 1;
      if (users > 0) {
        usersPerShard.set(shard, users);
        return;
      }
      usersPerShard.delete(shard);
      subscribed.delete(shard);
      if (!stopped) subscriber.unsubscribe(changeChannel(prefix, shard)).catch(() => undefined);
    },
    async renew() {
      await Promise.all([...usersPerShard.keys()].map(subscribe));
    },
    stop() {
      stopped = true;
    },
  };
}
