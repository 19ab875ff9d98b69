import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from './create-redis.ts';
import { answeredWithin } from './hung-redis-breaker.ts';

/**
 * Checks one server: `where` is `host:port` on a cluster, '' for a single server. Rejects when the
 * server could not be read.
 */
export type CheckRedisNode = (node: Redis, where: string) => Promise<void>;

/** Told why a server could not be read (`where` as for the check), to say so once. */
export type OnUnreadableRedisNode = (error: Error, where: string) => void;

/**
 * Whether a server that could not be read is worth asking again at the next chance. A refusal that
 * will come again (NOPERM from its ACL, an unknown or renamed command) would only repeat the same
 * warning at every slot-map refresh (every 2 s) for as long as the process runs; any other failure
 * (a connection lost, BUSY while a long script runs, LOADING) may pass.
 */
export function askAgain(error: Error): boolean {
  return !(error.name === 'ReplyError' && /^(NOPERM|ERR unknown command)/.test(error.message));
}

export interface WatchRedisNodesOptions {
  /** How long start-up waits for a first connection; 3 s unless given. */
  readonly startupWaitMs?: number;
  /** How long one check may wait for its server's answer; 5 s unless given. */
  readonly checkBudgetMs?: number;
}

/**
 * Runs `check` whenever `redis` (re)connects: at start-up (waiting at most `startupWaitMs` for a
 * first connection, since a receiver must start while Redis is down) and after every reconnect,
 * since a restarted or failed-over Redis may come back with another config. Resolves once the
 * start-up checks ran.
 *
 * On a cluster every master is checked on its own (a cluster-wide command would answer from one
 * node only), and again whenever the slot map changes: a promoted replica is a new master with a
 * config of its own. A master that could not be read is told to `onUnreadable` and asked again at
 * the next chance, unless it refused for good (askAgain).
 *
 * A check that gets no answer within `checkBudgetMs` (a server that keeps its connection open and
 * answers nothing) is told as a RedisTimeoutError, and the server is asked again at the first
 * chance after that call ends (answered late, or failed as its connection dropped): without the
 * budget, one hung master held start-up for good, and every later slot-map refresh chained one
 * more wait behind it for as long as the process ran.
 */
export async function watchRedisNodes(
  redis: RedisClient,
  check: CheckRedisNode,
  onUnreadable: OnUnreadableRedisNode,
  options: WatchRedisNodesOptions = {},
): Promise<void> {
  const { startupWaitMs = 3_000, checkBudgetMs = 5_000 } = options;
  let latest: Promise<void> | undefined;
  // Masters already checked; forgotten when the cluster drops a node, so a node that comes back
  // (possibly restarted with another config) is checked again.
  const checked = new Set<string>();
  // Servers whose check is still unanswered, past its budget or not: none is asked again until it
  // ends (answered, or failed with its connection), so a server that hangs for good costs one
  // unanswered call and one warning, not one more of each at every slot-map refresh.
  const unanswered = new Set<string>();
  /** Resolves false when the server could not be read and should be asked again. */
  const checkOne = async (node: Redis, where: string): Promise<boolean> => {
    if (unanswered.has(where)) return false;
    unanswered.add(where);
    const call = check(node, where);
    const ended = () => unanswered.delete(where);
    void call.then(ended, ended);
    try {
      await answeredWithin(call, checkBudgetMs);
      return true;
    } catch (error) {
      onUnreadable(error as Error, where);
      return !askAgain(error as Error);
    }
  };
  const checkAll = async () => {
    if (!(redis instanceof Cluster)) {
      await checkOne(redis, '');
      return;
    }
    await Promise.all(
      redis.nodes('master').map(async (node) => {
        const where = `${node.options.host}:${node.options.port}`;
        if (checked.has(where)) return;
        // Claimed before the check: 'ready' and 'refresh' often fire together at start-up.
        checked.add(where);
        if (!(await checkOne(node, where))) checked.delete(where);
      }),
    );
  };
  // Start-up waits for every check started so far, not only the newest one; later checks are
  // waited for by nobody.
  let starting = true;
  const recheck = () => {
    const run = checkAll();
    if (starting) latest = Promise.all([latest, run]).then(() => undefined);
  };
  redis.on('ready', recheck);
  if (redis instanceof Cluster) {
    redis.on('refresh', recheck);
    redis.on('-node', (node: Redis) => checked.delete(`${node.options.host}:${node.options.port}`));
  }
  if (redis.status === 'ready') recheck();
  else {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, startupWaitMs);
      function done() {
        clearTimeout(timer);
        redis.off('ready', done);
        resolve();
      }
      redis.once('ready', done);
    });
  }
  await latest;
  starting = false;
  latest = undefined;
}
