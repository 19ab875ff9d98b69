import type { RedisClient } from '../../../shared/redis/create-redis.ts';
import type { Logger } from '../../../shared/logging/create-logger.ts';
import { withTimeout } from '../../../shared/time/with-timeout.ts';
import { banKeys } from '../../bans/ban-keys.ts';
import { bannedUsers, type BanChange } from '../../domain/ban-change.ts';

/** What a request needs to know: read from memory, so the hot path makes no database call. */
export interface BanView {
  isBanned(userId: string): boolean;
}

export interface BanCache extends BanView {
  /** Loads the set once, then keeps it fresh every `refreshMs` until stop(). */
  start(): Promise<void>;
  /** Reloads the set if its published version changed. */
  refresh(): Promise<void>;
  stop(): void;
}

export interface BanCacheOptions {
  /** BAN_REDIS_PREFIX: where the worker publishes the banned set. */
  prefix: string;
  /** BAN_REFRESH_MS: the bound on how long a stored ban or unban can go unseen here. */
  refreshMs: number;
  logger: Logger;
  /**
   * Every stored ban change (the worker's durable store, BansPort.all): read when the cache's first
   * load finds no published version. Redis may then have lost the set and hold only the changes
   * published since (every earlier ban lifted), so the store is read instead, once; the published
   * set is loaded when the worker has published it whole. Without it (tests) that first load reads
   * the set as it is.
   */
  stored?: () => Promise<readonly BanChange[]>;
}

/**
 * The longest a scheduled refresh may take before it counts as failed and the next one is
 * scheduled. A Redis that hangs (a stopped server, a cut network: no connection error) never
 * answers the GET, and the loop, which schedules the next refresh when one settles, stopped for
 * good: bans and unbans went unseen until a restart. Longer than a cluster failover's retries
 * (ioredis retries a command on a closed node for about 1.6 s), so a refresh that would succeed
 * is not given up.
 */
export const BAN_REFRESH_TIMEOUT_MS = 3_000;

/** A started cache: what a server must use, so it never serves a request before loading the bans. */
export async function startBanCache(redis: RedisClient, options: BanCacheOptions): Promise<BanCache> {
  const cache = createBanCache(redis, options);
  await cache.start();
  return cache;
}

/** The published version and set, read together. */
async function readPublished(
  redis: RedisClient,
  keys: ReturnType<typeof banKeys>,
): Promise<[version: string | null, members: string[]]> {
  const replies = await redis.multi().get(keys.version).smembers(keys.banned).exec();
  if (!replies) throw new Error('the ban list read was aborted');
  const [[versionError, version], [membersError, members]] = replies as [
    [Error | null, string | null],
    [Error | null, string[]],
  ];
  if (versionError) throw versionError;
  if (membersError) throw membersError;
  return [version, members];
}

/**
 * This instance's copy of the banned set. Every `refreshMs` it reads one counter; only when the
 * worker has published a change does it load the set again, so an idle ban list costs one GET per
 * interval per instance. When Redis is unreachable, or has lost the set, the last loaded set stays
 * in force (requests go on meanwhile: the rate limiter counts in memory) and the next interval retries;
 * a refresh that gets no answer counts as failed after BAN_REFRESH_TIMEOUT_MS.
 */
export function createBanCache(redis: RedisClient, options: BanCacheOptions): BanCache {
  const keys = banKeys(options.prefix);
  let banned = new Set<string>();
  let version: string | null | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  // A lasting Redis outage fails every refresh: logged when the failures begin and when they end.
  let failing = false;

  // Refreshes are numbered: one given up on (timed out) may still complete later, and must not
  // then replace what a newer one already loaded.
  let started = 0;
  let applied = 0;
  // A version that disappeared is a Redis that lost the published set (restarted without its
  // data, failed over to a replica that lacks it), not every ban lifted: the last loaded set stays
  // in force until the worker publishes the stored bans again (it does when it reconnects).
  let lost = false;
  const refresh = async () => {
    const mine = ++started;
    const latest = await redis.get(keys.version);
    // Still none published, or none any more: what is loaded stays in force.
    if (latest === null && version !== undefined) {
      if (!lost && typeof version === 'string')
        options.logger.warn('the published ban list is gone from Redis; the last loaded one stays in force');
      lost = true;
      return;
    }
    const loadStored = async (stored: NonNullable<BanCacheOptions['stored']>) => {
      // Nothing loaded yet and no published set: the store's bans, until one is published whole.
      const members = bannedUsers(await stored());
      if (mine < applied) return;
      applied = mine;
      banned = new Set(members);
      version = null;
      lost = true;
      // A fresh start before the worker's first publish says so too: not a warning.
      options.logger.info(
        'no published ban list in Redis yet; the stored bans are in force until the worker publishes them',
      );
    };
    if (latest === null && version === undefined && options.stored) return loadStored(options.stored);
    // A set published after one went missing is loaded whatever its number: a republish numbers
    // it from the clock, which can land on the very version last loaded. Still so until a read of
    // it succeeds (`lost` is cleared only once it is loaded).
    if (version !== undefined && latest === version && !lost) return;
    // The set and its version in one transaction (one slot: the keys share a hash tag): read apart,
    // a Redis that lost its data between them (a failover, a restart) answered the set empty, and
    // it was loaded under the version read before it, every ban lifted.
    const [current, members] = await readPublished(redis, keys);
    if (current === null && version !== undefined) {
      if (!lost)
        options.logger.warn('the published ban list is gone from Redis; the last loaded one stays in force');
      lost = true;
      return;
    }
    // Gone between the two reads of a first load: as when none was published.
    if (current === null && options.stored) return loadStored(options.stored);
    if (mine < applied) return;
    applied = mine;
    banned = new Set(members);
    version = current;
    if (current !== null) lost = false;
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      withTimeout(refresh(), BAN_REFRESH_TIMEOUT_MS, 'ban list refresh')
        .then(() => {
          if (failing) options.logger.info('ban list refreshed again');
          failing = false;
        })
        .catch((error: unknown) => {
          if (!failing) {
            options.logger.warn({ err: (error as Error).message }, 'ban list refresh failed; retried');
          }
          failing = true;
        })
        .finally(schedule);
    }, options.refreshMs);
    timer.unref();
  };

  return {
    isBanned: (userId) => banned.has(userId),
    async start() {
      await refresh();
      schedule();
    },
    refresh,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
