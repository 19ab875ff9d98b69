import type { Logger } from '../../shared/logging/create-logger.ts';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import { guardedRedis } from '../../shared/redis/hung-redis-breaker.ts';
import { changeChannel, shardOf } from './change-channels.ts';
import type { TrayChanges } from '../use-cases/tray-changes.ts';
import { inFlightBatches } from './in-flight-batches.ts';
import { changesOf, lostSince, marksChanges, removalsOf, type LiveChange } from './live-change.ts';
import { createLostChanges, type LostChanges } from './lost-changes.ts';
import { createPublishConfirmations } from './publish-confirmations.ts';
import { createRemovalLog, REMOVAL_KEEP_MS } from './removal-log.ts';
import type { RemovedRecord } from '../storage/port.ts';

/** The live streams' side of the use cases' announcements. */
export type ChangePublisher = TrayChanges;

/** Publishes live changes to the instances holding their users' streams. */
export type AnnounceChanges = (changes: readonly LiveChange[]) => Promise<void>;

/**
 * Publishes changes on the users' shard channels, one PUBLISH per shard touched, at most once: a
 * failed publish is logged and not made up for. For the streams' own messages (a stream replaced
 * at the per-user limit), whose loss the holder notices by itself at its next heartbeat; the use
 * cases' changes go through createChangePublisher, which makes up for a lost one.
 */
export function createChangeAnnouncer(redis: RedisClient, prefix: string, logger: Logger): AnnounceChanges {
  // A Redis that hangs (its connection open, nothing answered) held each announcing API call, a
  // mark-read say, for as long as it hung: past the budget a call fails as a refused one does.
  const guarded = guardedRedis(redis, logger);
  return async function publish(changes) {
    await Promise.all(
      [...byShard(changes)].map(([shard, list]) =>
        guarded(() => redis.publish(changeChannel(prefix, shard), JSON.stringify(list))).catch(
          (error: unknown) => {
            logger.warn({ err: (error as Error).message, shard }, 'live change not published');
          },
        ),
      ),
    );
  };
}

/** The changes by the shard channel of their users. */
function byShard(changes: readonly LiveChange[]): Map<number, LiveChange[]> {
  const shards = new Map<number, LiveChange[]>();
  for (const change of changes) {
    const shard = shardOf(change.userId);
    const list = shards.get(shard);
    if (list) list.push(change);
    else shards.set(shard, [change]);
  }
  return shards;
}

export interface ChangePublisherOptions {
  /** The first wait before lost changes are resynced (tests shorten it). */
  retryMs?: number;
  now?: () => number;
  /** Removed records kept in memory while Redis is out of reach (tests shorten it). */
  maxUnloggedRemovals?: number;
  /** Where lost changes are stored (tests count its calls); by default in `redis` under `prefix`. */
  lost?: LostChanges;
}

/** The first wait before lost changes are resynced; doubled while Redis stays out of reach. */
const RESYNC_RETRY_MS = 1_000;
const MAX_RESYNC_RETRY_MS = 30_000;
/** Removed records kept in memory for the removal log while Redis is out of reach (about 100 B each). */
const MAX_UNLOGGED = 100_000;
/** Removed records logged and announced together: one round of the removal log's scripts in flight. */
const REMOVALS_PER_PART = 2_048;

/** Records removed at `at` that the removal log does not hold yet. */
interface UnloggedRemovals {
  records: readonly RemovedRecord[];
  at: number;
}

/**
 * Publishes tray changes on the users' shard channels, one PUBLISH per shard touched. A publish
 * that fails never fails the job or the API call (the change is stored); its changes are made up
 * for instead: per user, the earliest change time lost is kept (in memory, one number per user)
 * and, once Redis takes commands again, stored in Redis (LostChanges) and announced as a `resync`,
 * which catches the user's open streams up from then; a stream that was away then catches up from
 * it when it resumes. Without that, a later change delivered to the stream would move its id past
 * the lost one, and no reconnect would look back that far (docs/live-tray.md). Removed records are
 * also kept in Redis for streams that were away (RemovalLog), before they are announced; one that
 * cannot be kept then is kept with the resync. What is kept in memory is lost if the process stops
 * before Redis is back.
 */
export function createChangePublisher(
  redis: RedisClient,
  prefix: string,
  logger: Logger,
  options: ChangePublisherOptions = {},
): ChangePublisher {
  const now = options.now ?? Date.now;
  const lost = options.lost ?? createLostChanges(redis, prefix);
  const removals = createRemovalLog(redis, prefix);
  // As createChangeAnnouncer's: what a hung Redis cuts short is owed.
  const guarded = guardedRedis(redis, logger);
  /**
   * Removed records not kept in the removal log yet (Redis out of reach), with their removal time,
   * oldest first: kept with the resync, at that time, which the resync's `since` is not after.
   * At most maxUnloggedRemovals records; past it the oldest are dropped, as are any older than the log
   * keeps (a stream away for them would be told to reset).
   */
  const maxUnlogged = options.maxUnloggedRemovals ?? MAX_UNLOGGED;
  let unlogged: UnloggedRemovals[] = [];
  let unloggedRecords = 0;
  function keepUnlogged(batches: readonly UnloggedRemovals[]): void {
    for (const batch of batches) {
      unlogged.push(batch);
      unloggedRecords += batch.records.length;
    }
    const oldest = now() - REMOVAL_KEEP_MS;
    let drop = 0;
    let dropped = 0;
    for (const batch of unlogged) {
      if (unloggedRecords - dropped <= maxUnlogged && batch.at >= oldest) break;
      drop += 1;
      dropped += batch.records.length;
    }
    if (drop === 0) return;
    unlogged = unlogged.slice(drop);
    unloggedRecords -= dropped;
    logger.warn(
      { records: dropped },
      'removed records dropped from the removal log while Redis is out of reach; streams away for them keep showing them',
    );
  }
  function takeUnlogged(): UnloggedRemovals[] {
    const taken = unlogged;
    unlogged = [];
    unloggedRecords = 0;
    return taken;
  }
  const firstRetryMs = options.retryMs ?? RESYNC_RETRY_MS;
  // Published to a server that turned out a replica (a failover behind its address): owed too.
  const confirmations = createPublishConfirmations(
    redis,
    `${prefix}:publish-confirmation`,
    (changes, at) => owe(changes, at),
    logger,
  );
  /** Per user, the earliest change time whose publish failed and is not resynced yet. */
  const owed = new Map<string, number>();
  let retry: NodeJS.Timeout | undefined;
  let retryMs = firstRetryMs;

  function owe(changes: readonly LiveChange[], at = now()): void {
    for (const change of changes) {
      const since = lostSince(change, at);
      owed.set(change.userId, Math.min(owed.get(change.userId) ?? since, since));
    }
    if (retry) return;
    retry = setTimeout(() => void resync(), retryMs);
    retry.unref();
  }

  /** Stores the owed users' lost changes, then announces their resyncs; owed again on a failure. */
  async function resync(): Promise<void> {
    retry = undefined;
    const due = [...owed].map(([userId, since]): LiveChange => ({ kind: 'resync', userId, since }));
    owed.clear();
    const removed = takeUnlogged();
    // A failure below waits longer before the next try.
    retryMs = Math.min(retryMs * 2, MAX_RESYNC_RETRY_MS);
    try {
      // Stored first: a stream resuming once the resync has gone out finds it, and the removals.
      for (const batch of removed) await removals.record(batch.records, batch.at);
      const at = now();
      // A batch at a time: an outage during large fan-outs leaves tens of thousands owed, and sent
      // at once the later calls ran past their budget, so the resync failed, the same size, for good.
      await inFlightBatches(due, (change) => lost.record(change.userId, lostSince(change, at), at));
    } catch (error) {
      logger.warn({ err: (error as Error).message, users: due.length }, 'lost live changes not resynced yet');
      // Logged again in full next time, before what failed since: a removal logged twice keeps
      // its latest time.
      const since = takeUnlogged();
      keepUnlogged(removed.concat(since));
      owe(due);
      return;
    }
    if (await publish(due)) retryMs = firstRetryMs;
  }

  /**
   * Publishes `changes`; false when some shard's publish failed (those changes are owed, a removal
   * from `at`, its time in the removal log: a later time would let its resync's catch-up start
   * after it).
   */
  async function publish(changes: readonly LiveChange[], at?: number): Promise<boolean> {
    const published = await Promise.all(
      [...byShard(changes)].map(([shard, list]) => {
        const confirmed = confirmations.sending(at ?? now());
        return guarded(() => redis.publish(changeChannel(prefix, shard), JSON.stringify(list))).then(
          () => (confirmed(list), true),
          (error: unknown) => {
            logger.warn(
              { err: (error as Error).message, shard },
              'live change not published; its users resync later',
            );
            owe(list, at);
            return false;
          },
        );
      }),
    );
    return published.every(Boolean);
  }
  /** A use case's announcement: what fails to go out is owed, never thrown. */
  const announce = async (changes: readonly LiveChange[]) => void (await publish(changes));

  return {
    recordsWritten: (records) => announce(changesOf('record', records)),
    async recordsRemoved(all) {
      // A part at a time, each logged at its own time and announced at once: a post deleted in a
      // community of 300,000 logs for seconds, and its removals logged at the time taken before
      // were older than a resuming stream's look-back (SETTLE_MS) once announced.
      for (let start = 0; start < all.length; start += REMOVALS_PER_PART) {
        const records = all.slice(start, start + REMOVALS_PER_PART);
        // Logged first: a stream resuming once the announcement has gone out finds the removal.
        const at = now();
        const changes = removalsOf(records);
        try {
          await removals.record(records, at);
        } catch (error) {
          logger.warn(
            { err: (error as Error).message, records: records.length },
            'removed records not logged for resuming streams yet; kept with their resync',
          );
          keepUnlogged([{ records, at }]);
          owe(changes, at);
        }
        await publish(changes, at);
      }
    },
    markedRead: (records) => announce(marksChanges({ kind: 'read' }, records)),
    inboxMarked(mark, records) {
      switch (mark.kind) {
        case 'seen':
          return announce(marksChanges({ kind: 'seen' }, records));
        case 'archive':
          return announce(marksChanges({ kind: 'archived' }, records));
        case 'snooze':
          return announce(marksChanges({ kind: 'snoozed', until: mark.until }, records));
        case 'unarchive':
        case 'unsnooze':
          // Back in the inbox: the whole record, with its inbox state, as v3 history shows it.
          return announce(changesOf('record', records));
      }
    },
    cleared: (userId, at) => announce([{ kind: 'cleared', userId, at }]),
    lastRead: (userId) => announce([{ kind: 'last-read', userId }]),
  };
}
