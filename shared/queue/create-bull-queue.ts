import Bull from 'bull';
import { createRedis, type RedisClient } from '../redis/create-redis.ts';
import type { RedisTarget } from '../redis/redis-target.ts';

export interface QueueConnection {
  /** A Redis URL or a cluster; on a cluster `prefix` must carry a hash tag (shared/config checks). */
  redis: RedisTarget;
  prefix: string;
}

/** A bull queue of createBullQueue, with its connections' drop typed. */
export type BullQueue<T> = Bull.Queue<T> & {
  /**
   * Drops every connection of the queue at once, for good: for a close that gives up waiting for a
   * hung job, so the blocking read waiting on the server takes no further job and the locks it
   * holds lapse (bull's own disconnect, untyped, ends only connections bull made itself, and this
   * factory makes them all). A job moved to active as the blocking read ended is taken again by
   * bull's stalled-job check on another worker.
   */
  disconnect(): Promise<void>;
};

/**
 * A bull queue with the project's connection rules. Bull needs three connections; the blocking and
 * subscriber ones must never time out requests (bull's documented requirement: maxRetriesPerRequest
 * null, enableReadyCheck false), while the command one fails fast so callers can fall back (the
 * receiver's spool) instead of waiting on ioredis's offline queue.
 */
export function createBullQueue<T>(
  name: string,
  connection: QueueConnection,
  settings?: Bull.AdvancedSettings,
  /** How long a command may go unanswered on the command connection (COMMAND_ANSWER_MS). */
  commandAnswerMs = COMMAND_ANSWER_MS,
): BullQueue<T> {
  const clients: RedisClient[] = [];
  let closing = false;
  let dropped = false;
  const drop = () => {
    closing = true;
    dropped = true;
    for (const client of clients) client.disconnect();
    // bull clears its timers (the stalled check, the held jobs' lock renewals) only once its close
    // is done, which a hung job never lets happen: they would keep the process from ever exiting.
    void (queue as unknown as { _clearTimers(): Promise<void> })._clearTimers().catch(() => undefined);
  };
  const queue = new Bull<T>(name, {
    prefix: connection.prefix,
    ...(settings ? { settings } : {}),
    createClient: (type) => {
      const client = createRedis(connection.redis, {
        maxRetriesPerRequest: type === 'client' ? 1 : null,
        enableReadyCheck: type === 'client',
        // The subscriber waits for messages with no command pending: a timeout would never arm.
        ...(type === 'bclient'
          ? { socketTimeout: blockingSocketTimeoutMs(settings) }
          : type === 'client'
            ? { socketTimeout: commandAnswerMs }
            : {}),
      });
      clients.push(client);
      // bull's close connects its blocking connection again at once (its forced reconnection) but
      // handles that connect only once the jobs in progress settle: while one runs, a connect
      // failing (Redis gone at a shutdown) was a rejection nobody handled, which ends the process.
      // So a connect never rejects here (one that fails is connected again by connectAgainOnEnd,
      // or by ioredis's own retries), and after a drop it does nothing: the connection stays gone.
      const connect = client.connect.bind(client);
      client.connect = () => (dropped ? Promise.resolve() : connect().catch(() => undefined));
      if (type === 'bclient') connectAgainOnEnd(client, () => closing);
      return client;
    },
  });
  // Bull disconnects only the clients it created itself; without this, every closed queue would
  // leave its three connections reconnecting for the life of the process.
  const close = queue.close.bind(queue);
  queue.close = async (doNotWaitJobs?: boolean) => {
    closing = true;
    try {
      await close(doNotWaitJobs);
    } finally {
      drop();
    }
  };
  // bull names a worker's blocking connection (CLIENT SETNAME, for the dashboard's worker list)
  // from a promise it leaves unhandled: a Redis user without CLIENT (Redis 6.2's -@dangerous, or
  // -client) ended the process at every worker start. The name is only a label: its refusal
  // goes to the queue's error listeners (logged), and the worker runs unnamed.
  const named = queue as unknown as { setWorkerName(): Promise<void> };
  const setWorkerName = named.setWorkerName.bind(queue);
  named.setWorkerName = () =>
    setWorkerName().catch((error: unknown) => {
      if (queue.listenerCount('error') > 0) queue.emit('error', error);
    });
  return Object.assign(queue, { disconnect: () => Promise.resolve(drop()) });
}

/**
 * How much longer than a blocking read's own timeout (bull's drainDelay) its answer may take before
 * the blocking connection is taken for dead: a server that stopped answering without a reset (a
 * primary gone, a failover behind one address) sends nothing, the socket sees no error while the
 * read waits, and the OS's keep-alive first probes after two hours; the worker took no job for
 * that long. A live server answers the read at its timeout, a busy one a little later.
 */
export const BLOCKING_ANSWER_MARGIN_MS = 10_000;

/**
 * The same for the command connection, whose commands (bull's scripts moving a job, extending its
 * lock) are answered in milliseconds: a job taken through a fresh blocking connection was moved to
 * active on the dead one, and waited there as long. A minute, not seconds: the queue dashboard's
 * clean of a large failed set is one script that may run for many seconds, and a connection
 * dropped under it would send it, and the lock renewals waiting behind it, again.
 */
export const COMMAND_ANSWER_MS = 60_000;

/** bull's default drainDelay, in seconds. */
const BULL_DRAIN_DELAY_S = 5;

const blockingSocketTimeoutMs = (settings: Bull.AdvancedSettings | undefined) =>
  (settings?.drainDelay ?? BULL_DRAIN_DELAY_S) * 1000 + BLOCKING_ANSWER_MARGIN_MS;

/** How long after its end the blocking connection is connected again, unless bull did it first. */
const BLOCKING_RECONNECT_MS = 1_000;

/**
 * bull's local pause that does not wait for active jobs (the worker's, while the storage is down)
 * drops its blocking connection and connects it again at once. While Redis cannot be reached
 * either, that connect fails, and ioredis, told to disconnect by hand, ends the connection for good:
 * bull never makes another, and once the queue is drained every BRPOPLPUSH fails "Connection is
 * closed.", swallowed by bull, so the worker takes no job again, with nothing said. A blocking
 * connection that ended while the queue is not closing is connected again here; one that cannot
 * reach Redis yet then reconnects as any connection does.
 */
function connectAgainOnEnd(client: RedisClient, closing: () => boolean): void {
  client.on('end', () => {
    setTimeout(() => {
      if (closing() || client.status !== 'end') return;
      client.connect().catch(() => undefined);
    }, BLOCKING_RECONNECT_MS).unref();
  });
}
