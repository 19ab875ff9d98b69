import type { Logger } from '../logging/create-logger.ts';
import { subscriberConnection, type RedisClient } from './create-redis.ts';
import { socketOf } from './redis-socket.ts';

export interface SubscriberWatchOptions {
  /** How often the connection is asked (a PING). */
  intervalMs: number;
  /** An answer later than this drops the connection. */
  timeoutMs: number;
  logger: Logger;
}

/**
 * A subscriber connection only receives. One whose peer vanished without a FIN or a RST (a network
 * cut, a host that lost its power, a NAT or firewall that forgot the flow) stays `ready` for as long
 * as TCP keeps it, hours with the operating system's defaults: nothing published reaches it, and
 * its user never learns that what was published meanwhile is lost to it. Every `intervalMs` this
 * sends a PING (which a subscribed connection may send) and, when no answer comes within
 * `timeoutMs`, destroys the socket: ioredis connects again and subscribes again, and that `ready`
 * tells onSubscriberReplaced's user to catch up. A cluster's subscriptions run on a connection of
 * their own to one node, which ioredis replaces (with one to some node, subscribed again) only
 * when it ends or its node leaves the slot map: a link to that node alone cut silently, the node
 * still in the map, was never replaced. That connection is watched the same way. Returns a stop.
 */
export function watchSubscriber(redis: RedisClient, options: SubscriberWatchOptions): () => void {
  let asking = false;
  const timer = setInterval(() => {
    const connection = subscriberConnection(redis);
    if (asking || !connection || connection.status !== 'ready') return;
    asking = true;
    const socket = socketOf(connection);
    const late = setTimeout(() => {
      // Only the connection asked: one made since is not this one's to judge.
      if (subscriberConnection(redis) !== connection) return;
      if (socketOf(connection) !== socket || connection.status !== 'ready') return;
      options.logger.warn(
        { timeoutMs: options.timeoutMs },
        'the live subscription did not answer a PING in time: connecting again',
      );
      socket?.destroy();
    }, options.timeoutMs);
    // The PING of a dropped connection is sent again on the next one; it settles there.
    connection
      .ping()
      .catch(() => undefined)
      .finally(() => {
        clearTimeout(late);
        asking = false;
      });
  }, options.intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
