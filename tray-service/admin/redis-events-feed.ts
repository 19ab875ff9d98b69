import type { Logger } from '../../shared/logging/create-logger.ts';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import { parseStoredEvent, storedEventsChannel } from './stored-events-channel.ts';
import type { FeedListener, StoredEventsFeed } from '../use-cases/events-tail.ts';

export interface RedisEventsFeed extends StoredEventsFeed {
  /** Open tails on this instance. */
  readonly listeners: number;
  /** Ends every tail and the subscription's connection (shutdown). */
  close(): Promise<void>;
}

/**
 * The announced events on this admin instance: one subscriber connection, made when the first
 * tail opens (a connection in subscriber mode can run nothing else), subscribed while any tail is
 * open, and every message handed to each open tail.
 */
export function createRedisEventsFeed(options: {
  connect: () => RedisClient;
  prefix: string;
  logger: Logger;
}): RedisEventsFeed {
  const channel = storedEventsChannel(options.prefix);
  const listeners = new Set<FeedListener>();
  let subscriber: RedisClient | undefined;
  let subscribed: Promise<unknown> | undefined;
  let closed = false;

  const connection = () => {
    if (subscriber) return subscriber;
    const made = options.connect();
    made.on('message', (from: string, message: string) => {
      if (from !== channel) return;
      const event = parseStoredEvent(message);
      if (!event) return;
      for (const listener of listeners) listener.event(event);
    });
    // After a reconnect ioredis subscribes again to the channels it had (autoResubscribe).
    subscriber = made;
    return made;
  };

  return {
    get listeners() {
      return listeners.size;
    },
    async subscribe(listener) {
      // A tail still being authorised when the shutdown closed the feed: ended at once, and no new
      // connection, which nothing would close and whose tail would hold the listener's drain.
      if (closed) {
        listener.end();
        return () => undefined;
      }
      listeners.add(listener);
      subscribed ??= connection().subscribe(channel);
      try {
        await subscribed;
      } catch (error) {
        subscribed = undefined;
        listeners.delete(listener);
        throw error;
      }
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && subscribed) {
          subscribed = undefined;
          subscriber?.unsubscribe(channel).catch((error: unknown) => {
            options.logger.debug({ err: (error as Error).message }, 'events tail unsubscribe failed');
          });
        }
      };
    },
    async close() {
      closed = true;
      for (const listener of [...listeners]) listener.end();
      listeners.clear();
      subscriber?.disconnect();
      subscriber = undefined;
      subscribed = undefined;
    },
  };
}
