import { Cluster } from 'ioredis';
import type { RedisClient } from './create-redis.ts';
import { socketOf } from './redis-socket.ts';

/**
 * Drops the client's connections at once and connects again, failing every command still waiting
 * on them ("Connection is closed"), so what they hold is freed. ioredis's own `disconnect()` only
 * half-closes the socket and waits for the server to close its side: a stopped server or a dead
 * route never does, and the waiting commands stay in memory. Destroying the socket does not wait.
 *
 * A server client is closed as if by hand (its commands fail instead of being sent again after the
 * reconnect) and then connected again. A cluster's node connections never reconnect by themselves:
 * each one dropped fails its commands and leaves the pool, and the cluster finds its nodes again as
 * after losing one.
 */
export function dropConnection(redis: RedisClient): void {
  if (redis instanceof Cluster) {
    for (const node of redis.nodes()) socketOf(node)?.destroy();
    return;
  }
  // Its connection closed by itself already: ioredis connects again on its own timer and sends
  // what the closed connection held again once ready. disconnect() now would cancel that timer and
  // emit no 'end' (the socket has no close left to emit), leaving the client unconnected for good.
  if (redis.status === 'reconnecting') return;
  redis.once('end', () => void redis.connect().catch(() => undefined));
  redis.disconnect();
  socketOf(redis)?.destroy();
}
