import type { Logger } from '../../shared/logging/create-logger.ts';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import { banRank, type BanChange } from '../domain/ban-change.ts';
import { banKeys } from './ban-keys.ts';

/**
 * How long a published change is checked for: a failover loses the writes its replica had not
 * received, the last moments' ones, and completes within a cluster's node timeout and election
 * (15 s by default), well inside this.
 */
const RECENT_MS = 5 * 60_000;
/** The most changes checked at once (a burst of bans keeps its newest). */
const MAX_RECENT = 10_000;

export interface BanVersionWatch {
  /** The newest version of the published set this worker saw (its own publishes included). */
  seen(): number;
  /** Records a version this worker published or read. */
  observe(version: number): void;
  /** Records changes this worker published: each check asks whether they are still there. */
  published(changes: readonly BanChange[]): void;
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
 * the failover cannot. The number alone cannot tell once another publisher's changes have counted
 * it up again (several workers, an admin replay): so each check also reads back the ranks of the
 * changes this worker published in the last RECENT_MS, and one gone or older is a set gone back.
 */
export function watchBanVersion(options: BanVersionWatchOptions): BanVersionWatch {
  const { redis, onStale, logger } = options;
  const { version: versionKey, rank: rankKey } = banKeys(options.prefix);
  let seen = 0;
  const observe = (version: number) => {
    if (Number.isFinite(version)) seen = Math.max(seen, version);
  };
  /** userId -> the rank this worker published and when (insertion order: oldest first). */
  const recent = new Map<string, { rank: number; at: number }>();
  const published = (changes: readonly BanChange[]) => {
    const now = Date.now();
    for (const change of changes) {
      const rank = banRank(change);
      if ((recent.get(change.userId)?.rank ?? -Infinity) > rank) continue;
      recent.delete(change.userId);
      recent.set(change.userId, { rank, at: now });
    }
    for (const userId of recent.keys()) {
      if (recent.size <= MAX_RECENT) break;
      recent.delete(userId);
    }
  };
  /** The users whose change this worker published lately is no longer the published one's rank. */
  const lostChanges = async (): Promise<string[]> => {
    for (const [userId, { at }] of recent) {
      if (Date.now() - at < RECENT_MS) break;
      recent.delete(userId);
    }
    if (recent.size === 0) return [];
    const users = [...recent.keys()];
    const ranks = await redis.hmget(rankKey, ...users);
    return users.filter((userId, index) => {
      const stored = ranks[index];
      return stored == null || Number(stored) < (recent.get(userId)?.rank ?? 0);
    });
  };
  const check = async () => {
    // What was seen when the GET went out: a publish answered just after it (on the same
    // connection, its newer version observed before the GET's answer is read) is no rollback.
    const floor = seen;
    let version: number | null;
    let lost: string[] = [];
    try {
      const text = await redis.get(versionKey);
      version = text === null ? null : Number(text);
      if (version !== null && version >= floor) {
        observe(version);
        lost = await lostChanges();
        if (lost.length === 0) return;
      }
    } catch {
      // Redis unreachable: its reconnect republishes.
      return;
    }
    if (lost.length > 0) {
      logger.warn(
        { version, users: lost.length },
        'a ban change this worker published is gone from the published list (Redis went back to an older set); publishing it again',
      );
      // The republish writes every stored change back, these included (stored before published):
      // asked once, not at every check should the storage itself lack one.
      recent.clear();
    } else if (version !== null) {
      logger.warn(
        { version, seen: floor },
        'the published ban list went back to an older version; publishing it again',
      );
    }
    onStale();
  };
  // One check at a time: against a Redis that hangs they would pile up, one per interval.
  let checking = false;
  const timer = setInterval(() => {
    if (checking) return;
    checking = true;
    void check().finally(() => (checking = false));
  }, options.everyMs);
  timer.unref();
  return { seen: () => seen, observe, published, stop: () => clearInterval(timer) };
}
