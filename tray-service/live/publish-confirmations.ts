import { Cluster, ReplyError, type Redis } from 'ioredis';
import type { Logger } from '../../shared/logging/create-logger.ts';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import { guardedRedis } from '../../shared/redis/hung-redis-breaker.ts';
import { redisErrorCode } from '../../shared/redis/redis-failure.ts';
import { socketOf } from '../../shared/redis/redis-socket.ts';
import type { LiveChange } from './live-change.ts';

/** The socket of the client's connection at a time: another one once it reconnected. */
type Connection = ReturnType<typeof socketOf>;

/** Changes published at `at` (epoch ms) on one connection, not confirmed yet. */
interface Published {
  changes: readonly LiveChange[];
  at: number;
  connection: Connection;
}

export interface PublishConfirmations {
  /**
   * Called as a PUBLISH is sent, at `at` (epoch ms); the function it returns is called with its
   * changes once it was answered. The connection is the one of the call, not of the answer.
   */
  sending(at: number): (changes: readonly LiveChange[]) => void;
}

/** How long after a publish its server is asked to take a write. */
export const CONFIRM_MS = 1_000;
/** Changes held unconfirmed at most; past it they are confirmed at once. */
const MAX_UNCONFIRMED = 100_000;

/**
 * A managed Redis fails over behind one address: the old primary turns replica, and a connection
 * made before stays on it. A write there is refused (READONLY, and the connection is dropped:
 * create-redis.ts), but PUBLISH is answered, and a replica passes nothing on to its primary, so a
 * connection that only publishes would announce every change to nobody, for good. So whatever was
 * published is confirmed by a write on the same connection a second later (one small key, and
 * only after publishes): taken, those changes reached a primary; refused as a replica, or the
 * connection dropped or replaced meanwhile, they are handed to `lost` (resynced by the publisher).
 * Another refusal (OOM, NOPERM, MISCONF) comes from a primary that did take the publishes. A
 * Redis Cluster needs none of this: PUBLISH reaches every node of the cluster.
 */
export function createPublishConfirmations(
  redis: RedisClient,
  key: string,
  lost: (changes: readonly LiveChange[], at: number) => void,
  logger: Logger,
  confirmMs = CONFIRM_MS,
): PublishConfirmations {
  if (redis instanceof Cluster) return { sending: () => () => undefined };
  const server: Redis = redis;
  const guarded = guardedRedis(server);
  // Each connection the client makes has a socket of its own: what went out on an earlier one is
  // confirmed by no write on a later one.
  let unconfirmed: Published[] = [];
  let count = 0;
  let timer: NodeJS.Timeout | undefined;

  async function confirm(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    const taken = unconfirmed;
    unconfirmed = [];
    count = 0;
    const sentOn = socketOf(server);
    let confirmed = false;
    try {
      await guarded(() => server.set(key, '1', 'PX', 60_000));
      confirmed = true;
    } catch (error) {
      confirmed = error instanceof ReplyError && redisErrorCode(error) !== 'READONLY';
    }
    const reached = (batch: Published) =>
      confirmed && batch.connection === sentOn && socketOf(server) === sentOn && !sentOn?.destroyed;
    const missed = taken.filter((batch) => !reached(batch));
    if (missed.length === 0) return;
    logger.warn(
      { changes: missed.reduce((sum, batch) => sum + batch.changes.length, 0) },
      'live changes published on a connection that then failed or found a replica; their users are resynced',
    );
    for (const batch of missed) lost(batch.changes, batch.at);
  }

  return {
    sending(at) {
      const sentOn = socketOf(server);
      return (changes) => {
        unconfirmed.push({ changes, at, connection: sentOn });
        count += changes.length;
        if (count >= MAX_UNCONFIRMED) void confirm();
        else if (!timer) {
          timer = setTimeout(() => void confirm(), confirmMs);
          timer.unref();
        }
      };
    },
  };
}
