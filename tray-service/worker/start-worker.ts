import type Bull from 'bull';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import type { Db } from 'mongodb';
import type { Registry } from 'prom-client';
import type { Logger } from '../../shared/logging/create-logger.ts';
import type { WebhookJobData } from '../../shared/queue/webhook-queue.ts';
import type { StoredEventDoc } from '../../shared/tray/tray-record.ts';
import { ensureCollections, type EnsuredStorage } from '../storage/mongodb/ensure-collections.ts';
import { publishBans } from '../bans/publish-bans.ts';
import type { ChangePublisher } from '../live/change-publisher.ts';
import { migrateRecordShape } from '../storage/mongodb/migrate-record-shape.ts';
import { storedBanChanges } from '../storage/mongodb/ban-store.ts';
import { workerCollections } from '../storage/mongodb/tray-collections.ts';
import { purgeExpired } from '../storage/mongodb/purge-expired.ts';
import pLimit from 'p-limit';
import { keyedBatches } from '../../shared/async/keyed-batches.ts';
import type { Activity } from '../domain/activity.ts';
import { KeyedLock } from '../../shared/async/keyed-lock.ts';
import { processJob } from './process-job.ts';
import { createWorkerMetrics } from './worker-metrics.ts';

/**
 * Posts of one community in one fan-out at most: each member's deliveries are built per batch of
 * recipients (TRAY_FANOUT_BATCH x this many at most in memory), and a fan-out that fails is retried
 * by every job in it.
 */
const POSTS_PER_FAN_OUT = 32;

export interface WorkerDeps {
  queue: Bull.Queue<WebhookJobData>;
  db: Db;
  logger: Logger;
  registry: Registry;
  /** TRAY_WORKER_CONCURRENCY. */
  concurrency?: number;
  eventsRetentionDays?: number;
  trayRetentionDays?: number;
  /** TRAY_PURGE_INTERVAL_MS; 0 turns the periodic purge off (tests call purgeExpired directly). */
  purgeIntervalMs?: number;
  fanOutBatch?: number;
  /** TRAY_FANOUT_CONCURRENCY: community-post fan-outs at once (default 4). */
  fanOutConcurrency?: number;
  /**
   * Where stored ban changes are published for the API: BAN_REDIS_PREFIX on the queue's Redis
   * unless a connection is given. Default prefix `tray-bans`.
   */
  bans?: { prefix: string; redis?: RedisClient };
  /** The moderation step plugs in here: called once per processed job, after the event is stored. */
  onStored?: (event: StoredEventDoc) => Promise<void>;
  /** The service's start-up ensureCollections result; without it the worker ensures its own collections. */
  storage?: EnsuredStorage;
  /** FERRETDB_POSTGRESQL_URL, for the worker's own ensureCollections. */
  postgresUrl?: string | undefined;
  /** Where record writes are announced to live streams (docs/live-tray.md); none without it. */
  changes?: ChangePublisher;
}

export interface RunningWorker {
  /** Whether the server accepted TTL indexes (else only the periodic purge removes expired data). */
  readonly ttl: boolean;
  close(): Promise<void>;
}

export async function startWorker(deps: WorkerDeps): Promise<RunningWorker> {
  const { ttl } =
    deps.storage ??
    (await ensureCollections(deps.db, workerCollections, {
      logger: deps.logger,
      postgresUrl: deps.postgresUrl,
    }));
  // Records of earlier versions get the current shape before any job touches them (once per database).
  const migrated = await migrateRecordShape(deps.db, { retentionDays: deps.trayRetentionDays ?? 90 });
  if (migrated > 0) deps.logger.info({ migrated }, 'tray records brought to the current shape');
  const bans = { redis: deps.bans?.redis ?? deps.queue.client, prefix: deps.bans?.prefix ?? 'tray-bans' };
  // Redis may have lost the published set (a restart without persistence, a new instance): the
  // durable store holds every ban, and republishing keeps whatever newer change Redis has.
  await publishBans(bans.redis, bans.prefix, await storedBanChanges(deps.db));
  const metrics = createWorkerMetrics(deps.registry);
  const options = {
    eventsRetentionDays: deps.eventsRetentionDays ?? 30,
    trayRetentionDays: deps.trayRetentionDays ?? 90,
    fanOutBatch: deps.fanOutBatch ?? 10_000,
    fanOuts: pLimit(deps.fanOutConcurrency ?? 4),
    // A fan-out costs the same for one post as for many: posts to a community that arrive while
    // its fan-out runs go together in the next one.
    batchPosts: keyedBatches<Activity>({ maxBatch: POSTS_PER_FAN_OUT }),
    lock: new KeyedLock(),
    bans,
    ...(deps.onStored ? { onStored: deps.onStored } : {}),
    ...(deps.changes ? { onRecordsWritten: deps.changes.recordsWritten } : {}),
  };

  void deps.queue.process(deps.concurrency ?? 4, async (job) => {
    const stopTimer = metrics.duration.startTimer();
    try {
      const stored = await processJob(deps.db, job.data, options);
      metrics.jobs.inc({ outcome: 'completed' });
      metrics.events.inc({ status: stored.status });
      if (stored.status === 'invalid') {
        deps.logger.warn(
          { event: stored.event, key: stored._id, error: stored.error },
          'invalid event payload stored',
        );
      }
      return { status: stored.status };
    } catch (error) {
      metrics.jobs.inc({ outcome: 'failed' });
      deps.logger.warn(
        { key: job.data.dedupeKey, attempt: job.attemptsMade + 1, err: (error as Error).message },
        'job failed; bull retries it with backoff',
      );
      throw error;
    } finally {
      stopTimer();
    }
  });

  const purgeIntervalMs = deps.purgeIntervalMs ?? 3_600_000;
  const purge = async () => {
    try {
      const purged = await purgeExpired(deps.db);
      if (purged.records + purged.events > 0) deps.logger.info(purged, 'purged expired records and events');
    } catch (error) {
      deps.logger.warn({ err: (error as Error).message }, 'purge failed; retried at the next interval');
    }
  };
  if (purgeIntervalMs > 0) void purge();
  const timer = purgeIntervalMs > 0 ? setInterval(() => void purge(), purgeIntervalMs) : undefined;
  timer?.unref();

  return {
    ttl,
    close: async () => {
      clearInterval(timer);
      // Waits for in-flight jobs; unfinished ones are picked up again as stalled jobs.
      await deps.queue.close();
    },
  };
}
