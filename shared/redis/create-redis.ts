import { Cluster, Redis } from 'ioredis';
import { handleRestoreFailures } from './handle-restore-failures.ts';
import { isRedisAuthError, redisErrorCode } from './redis-failure.ts';
import { isCluster, type RedisTarget } from './redis-target.ts';

/** A connection to one Redis server or to a Redis Cluster; both take the same commands. */
export type RedisClient = Redis | Cluster;

/** How a connection behaves while Redis is unreachable; the same rules for a server and a cluster. */
export interface RedisConnectionRules {
  /** Tries per command before it fails; null waits forever (bull's blocking and subscriber connections). */
  maxRetriesPerRequest: number | null;
  /** Whether commands issued while disconnected wait for the connection instead of failing at once. */
  enableOfflineQueue: boolean;
  enableReadyCheck: boolean;
  connectTimeout: number;
  /** Wait before reconnect attempt `attempt` (1, 2, ...), in ms. */
  retryStrategy: (attempt: number) => number;
  /**
   * With a command waiting, how long the connection may receive nothing before it is dropped and
   * made again (its commands sent again on the new one); unset: it waits for as long as the OS
   * keeps the socket.
   */
  socketTimeout?: number;
}

/**
 * The default for commands that must fail fast when Redis is down (readiness probes, rate limits):
 * a bounded retry per request instead of ioredis's default of queueing forever.
 */
export const failFastRules: RedisConnectionRules = {
  maxRetriesPerRequest: 1,
  enableOfflineQueue: true,
  enableReadyCheck: true,
  connectTimeout: 2_000,
  retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
};

/**
 * How often a cluster connection re-reads the slot map on its own. ioredis otherwise re-reads it
 * only after an error, and a master that hangs (stopped process, cut network: no TCP reset) causes
 * none: after its replica took over, bull's worker stayed blocked on it, rate-limit calls and the
 * ban cache's reads never answered and the live streams' subscription received nothing, for good.
 * With the refresh, the hung node drops out of the map within this interval of the failover;
 * ioredis then closes its connections (destroyed after its 2 s disconnect timeout), which fails
 * the commands waiting there: ioredis sends them again to the promoted master, bull restarts its
 * blocking read, and the subscriber moves to another node. 2 s keeps that delay small next to the
 * failover itself (cluster-node-timeout, 15 s by Redis's default) at the cost of one short
 * connection and CLUSTER SLOTS per client every 2 s (ioredis reads the map on a connection of its
 * own, so a blocked one is never in the way).
 */
export const SLOTS_REFRESH_INTERVAL_MS = 2_000;

/**
 * A connection to `target` with `rules`. On a cluster, ioredis follows MOVED and ASK redirections
 * and, when a node's connection closes (a master died or handed over), waits 100 ms, re-reads the
 * slot map and sends the command again, up to 16 times: a failover that completes within about
 * 1.6 s costs a command nothing but time; a hung master is noticed by re-reading the slot map
 * every SLOTS_REFRESH_INTERVAL_MS. The rules' retry strategy then applies to reconnecting
 * to the cluster as a whole; each node connection follows maxRetriesPerRequest.
 */
export function createRedis(target: RedisTarget, rules: Partial<RedisConnectionRules> = {}): RedisClient {
  const {
    maxRetriesPerRequest,
    enableOfflineQueue,
    enableReadyCheck,
    connectTimeout,
    retryStrategy,
    socketTimeout,
  } = {
    ...failFastRules,
    ...rules,
  };
  const timeout = socketTimeout === undefined ? {} : { socketTimeout };
  if (!isCluster(target)) {
    const redis = new Redis(target, {
      maxRetriesPerRequest,
      enableOfflineQueue,
      enableReadyCheck,
      connectTimeout,
      retryStrategy,
      ...timeout,
      reconnectOnError: reconnectOnReadonly,
    });
    // A cluster's subscriber connection is never restored this way: ioredis replaces it with a new
    // one and subscribes that with handlers of its own.
    handleRestoreFailures(redis);
    if (socketTimeout !== undefined) clearSocketTimeoutOnEnd(redis);
    return redis;
  }
  const cluster = new Cluster(
    target.clusterNodes.map((node) => ({ host: node.host, port: node.port })),
    {
      enableOfflineQueue,
      enableReadyCheck,
      clusterRetryStrategy: retryStrategy,
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 100,
      retryDelayOnTryAgain: 100,
      slotsRefreshInterval: SLOTS_REFRESH_INTERVAL_MS,
      // Over TLS a seed given by name is reached by that name, not by the address it resolves to:
      // the node's certificate names the host (ioredis's documented setting for TLS clusters).
      ...(target.tls ? { dnsLookup: keepHostName } : {}),
      // bull checks these two on the per-node options of its blocking and subscriber connections.
      // The same AUTH and TLS on every node: ioredis makes each node's connection (the subscriber's
      // too) from these options.
      redisOptions: {
        maxRetriesPerRequest,
        enableReadyCheck,
        connectTimeout,
        ...timeout,
        ...target.auth,
        ...(target.tls ? { tls: target.tls } : {}),
      },
    },
  );
  paceSubscriberReselection(cluster, retryStrategy);
  stopSlotsRefreshOnEnd(cluster);
  // Each node's connection has the socket timeout too (redisOptions), and the same quirk.
  if (socketTimeout !== undefined) cluster.on('+node', (node: Redis) => clearSocketTimeoutOnEnd(node));
  if (maxRetriesPerRequest !== null) failQueuedCommandsOnClose(cluster);
  return cluster;
}

/** A cluster's `dnsLookup` that resolves nothing: the connection looks the name up itself. */
function keepHostName(address: string, callback: (error: Error | null, address: string) => void): void {
  callback(null, address);
}

/**
 * A managed Redis fails over behind one address (a DNS name, a virtual IP): the old primary is
 * demoted to a replica, and a connection made before stays on it, every write answered READONLY,
 * for good. Such an error drops the connection, so the next one reaches whichever server the
 * address names now (ioredis's documented use of reconnectOnError). The failed command is not
 * sent again (`true`, not 2): its caller sees the error, as for any other failed write (the
 * receiver spools the event, bull retries), and a command never waits on a connection that may
 * reach the same replica again. A cluster needs none of this: a replica answers MOVED there, and
 * ioredis follows it.
 */
export function reconnectOnReadonly(error: Error): boolean {
  return error.message.startsWith('READONLY');
}

/** The parts of ioredis's Cluster (5.x) that its typings keep private and the fixes below use. */
interface ClusterInternals {
  subscriber?: ClusterSubscriberInternals;
  offlineQueue?: { length: number };
  flushQueue?: (error: Error) => void;
  /** Whether a slot-map refresh is in flight; its callbacks wait in _refreshSlotsCacheCallbacks. */
  isRefreshing?: boolean;
  _refreshSlotsCacheCallbacks?: ((error?: Error) => void)[];
  /** Clears the timer of the periodic slot-map refresh (slotsRefreshInterval). */
  clearNodesRefreshInterval?: () => void;
}

/** ioredis's ClusterSubscriber: the one connection a cluster client runs its subscriptions on. */
interface ClusterSubscriberInternals {
  onSubscriberEnd?: () => void;
  /** Opens a new subscriber connection on a node of the pool and subscribes it again. */
  selectSubscriber?: () => void;
  getInstance?: () => Redis | null;
}

/**
 * Calls `use` with every subscriber connection the cluster opens from now on. ioredis replaces
 * that connection by itself (its node left the slot map, or the connection ended) and says so
 * with no event of the cluster's: its `ready` is the cluster's, which stays ready meanwhile.
 */
function onNewClusterSubscriber(cluster: Cluster, use: (connection: Redis) => void): boolean {
  const subscriber = (cluster as unknown as ClusterInternals).subscriber;
  const select = subscriber?.selectSubscriber;
  if (!subscriber || typeof select !== 'function') return false;
  subscriber.selectSubscriber = function (this: ClusterSubscriberInternals) {
    select.call(this);
    const connection = this.getInstance?.();
    if (connection) use(connection);
  };
  return true;
}

/**
 * Calls `replaced` each time `redis`'s subscriber connection becomes ready after it was called
 * (connected again, or connected at last): then whatever was published meanwhile reached nobody
 * here, and subscriptions made meanwhile may be missing, so its user subscribes again and catches
 * up. Its first connection counts too when it comes after the call: a SUBSCRIBE sent before it
 * and failed (maxRetriesPerRequest, two failed connects at start-up) is restored by nobody else,
 * and the streams waiting for it would get no change ever. A single server's connection
 * reconnects itself (its `ready` again). A cluster's opens a new connection to some node instead
 * and subscribes it to the same channels, never emitting `ready` again; here the new connection's
 * own `ready` counts.
 */
export function onSubscriberReplaced(redis: RedisClient, replaced: () => void): void {
  if (!(redis instanceof Cluster)) {
    redis.on('ready', replaced);
    return;
  }
  const watch = (connection: Redis) => connection.on('ready', replaced);
  const current = (redis as unknown as ClusterInternals).subscriber?.getInstance?.() ?? null;
  if (current) watch(current);
  onNewClusterSubscriber(redis, watch);
}

/**
 * Whether `redis`'s subscriber connection is connected now: a cluster's is its own connection to
 * one node, replaced while the cluster itself stays ready (onNewClusterSubscriber).
 */
export function isSubscriberConnected(redis: RedisClient): boolean {
  return subscriberConnection(redis)?.status === 'ready';
}

/**
 * The connection `redis`'s subscriptions run on: the client itself, or a cluster's own connection
 * to one node (null before it has one), which ioredis replaces with one to another node.
 */
export function subscriberConnection(redis: RedisClient): Redis | null {
  if (!(redis instanceof Cluster)) return redis;
  return (redis as unknown as ClusterInternals).subscriber?.getInstance?.() ?? null;
}

/**
 * ioredis picks a new node for a cluster's subscriber connection the moment the current one ends
 * (https://github.com/redis/ioredis/pull/1589), with no wait: while every node is down, a
 * connection with subscriptions (bull's, the live streams') reconnects in a busy loop, a new
 * connection and error each time. That loop held a tray process at 50-100 % CPU and grew it by
 * about 25 MB a second (RELIABILITY.md). Here each reselection waits as a reconnect would, and the
 * count starts again once a new subscriber connection is up (or the cluster is ready again): the
 * cluster stays ready while only its subscriber is replaced, so counting from its `ready` alone
 * made every later replacement wait longer, up to the strategy's longest wait.
 */
function paceSubscriberReselection(cluster: Cluster, retryStrategy: (attempt: number) => number): void {
  const subscriber = (cluster as unknown as ClusterInternals).subscriber;
  const reselect = subscriber?.onSubscriberEnd;
  if (!subscriber || !reselect) return;
  let attempt = 0;
  let timer: NodeJS.Timeout | undefined;
  const connected = () => {
    attempt = 0;
  };
  cluster.on('ready', connected);
  onNewClusterSubscriber(cluster, (connection) => connection.on('ready', connected));
  cluster.on('end', () => clearTimeout(timer));
  subscriber.onSubscriberEnd = () => {
    attempt += 1;
    clearTimeout(timer);
    timer = setTimeout(reselect, retryStrategy(attempt));
    timer.unref();
  };
}

/**
 * ioredis (5.x) arms a socket timeout while a command waits for its answer and clears it only when
 * data arrives: a connection closed with a command pending (a worker's blocking read, dropped at a
 * close that gave up on a hung job) kept that timer, up to socketTimeout, and with it its process
 * alive. Once the connection has ended for good, nothing is left to time out.
 */
function clearSocketTimeoutOnEnd(redis: Redis): void {
  const internals = redis as unknown as { socketTimeoutTimer?: NodeJS.Timeout };
  redis.on('end', () => {
    clearTimeout(internals.socketTimeoutTimer);
    internals.socketTimeoutTimer = undefined;
  });
}

/**
 * quit() and disconnect() clear the periodic slot-map refresh's timer, but ioredis (5.11) arms the
 * next one from the callback of the refresh in flight: a cluster closed during a refresh went on
 * reading the slot map every SLOTS_REFRESH_INTERVAL_MS for good, and kept its process alive. Once
 * the cluster has ended, the timer is cleared after that refresh's callbacks have run (ours is
 * queued behind the one that re-arms it), or at once when none is in flight.
 */
function stopSlotsRefreshOnEnd(cluster: Cluster): void {
  const internals = cluster as unknown as ClusterInternals;
  const clear = internals.clearNodesRefreshInterval;
  if (typeof clear !== 'function') return;
  cluster.on('end', () => {
    const callbacks = internals._refreshSlotsCacheCallbacks;
    if (internals.isRefreshing && callbacks) callbacks.push(() => clear.call(cluster));
    else clear.call(cluster);
  });
}

/**
 * A cluster with no reachable node keeps every command in its own offline queue until it connects
 * again, whatever maxRetriesPerRequest says, so a lasting outage grew that queue by every command
 * issued meanwhile. For connections meant to fail fast, each failed reconnect ends the commands
 * it was holding, as a single server's connection does after its retries.
 */
function failQueuedCommandsOnClose(cluster: Cluster): void {
  const internals = cluster as unknown as ClusterInternals;
  if (typeof internals.flushQueue !== 'function') return;
  // Why the last node asked for the slot map refused, as the commands' cause: a node refusing the
  // password (NOAUTH, WRONGPASS) is then told apart from one out of reach (isRedisAuthError).
  let lastNodeError: unknown;
  cluster.on('node error', (error: unknown) => (lastNodeError = error));
  cluster.on('ready', () => (lastNodeError = undefined));
  cluster.on('close', () => {
    if ((internals.offlineQueue?.length ?? 0) > 0) {
      // Its code word only (NOAUTH, ECONNREFUSED): a reply's text may carry a command's arguments.
      const why =
        lastNodeError === undefined
          ? 'unreachable'
          : `${isRedisAuthError(lastNodeError) ? 'did not accept the credentials' : 'unreachable'} (${redisErrorCode(lastNodeError)})`;
      const cause = lastNodeError === undefined ? undefined : { cause: lastNodeError };
      internals.flushQueue?.call(cluster, new Error(`Redis Cluster ${why}: command not sent`, cause));
    }
  });
}

export async function pingRedis(redis: RedisClient): Promise<void> {
  const answer = await redis.ping();
  if (answer !== 'PONG') throw new Error(`unexpected PING answer ${answer}`);
}
