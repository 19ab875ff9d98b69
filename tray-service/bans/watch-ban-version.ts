import type { Logger } from '../../shared/logging/create-logger.ts';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import { banKeys } from './ban-keys.ts';

export interface BanVersionWatch {
  /** The newest version of the published set this worker saw (its own publishes included). */
  seen(): number;
  /** Records a version this worker published or read. */
  observe(version: number): void;
  stop(): void;
}

export interface BanVersionWatchOptions {
  redis: RedisClient;
  prefix: string;
  everyMs: number;
  /** The set is gone or went back: every stored ban must be published again. */
  onStale: () => void;
  logger: Logger;
}

/**
 * Redis can lose the published set, or go back to an older one, with nothing to tell the worker:
 * no reconnect and no ban event (a failover to an empty replica or to one that lagged behind, a
 * FLUSHDB, an eviction, a restore from an older snapshot). A version gone would let an API
 * instance starting meanwhile load whatever set is left; a version gone back is loaded by every
 * instance, the bans published since lifted. One GET per interval finds either and asks for every
 * stored ban to be published again (publishAllBans marks a set gone back with a version above the
 * newest seen). Only a worker that saw the newer version can tell it went back: one started after
 * the failover cannot.
 */
export function watchBanVersion(options: BanVersionWatchOptions): BanVersionWatch {
  const { redis, onStale, logger } = options;
  const versionKey = banKeys(options.prefix).version;
  let seen = 0;
  const observe = (version: number) => {
    if (Number.isFinite(version)) seen = Math.max(seen, version);
  };
  // One check at a time: against a Redis that hangs they would pile up, one per interval.
  let checking = false;
  const timer = setInterval(() => {
    if (checking) return;
    checking = true;
    // What was seen when the GET went out: a publish answered just after it (on the same
    // connection, its newer version observed before this callback runs) is no rollback.
    const floor = seen;
    redis
      .get(versionKey)
      .finally(() => (checking = false))
      .then(
        (text) => {
          const version = text === null ? null : Number(text);
          if (version !== null && version >= floor) {
            observe(version);
            return;
          }
          if (version !== null) {
            logger.warn(
              { version, seen: floor },
              'the published ban list went back to an older version; publishing it again',
            );
          }
          onStale();
        },
        // Redis unreachable: its reconnect republishes.
        () => undefined,
      );
  }, options.everyMs);
  timer.unref();
  return { seen: () => seen, observe, stop: () => clearInterval(timer) };
}
