import type Bull from 'bull';
import type { BullQueue } from '../../shared/queue/create-bull-queue.ts';
import pLimit from 'p-limit';
import type { Registry } from 'prom-client';
import { keyedBatches } from '../../shared/async/keyed-batches.ts';
import type { Logger } from '../../shared/logging/create-logger.ts';
import { redactUrlCredentials } from '../../shared/logging/redact-url-credentials.ts';
import { watchProcessing } from '../../shared/queue/watch-processing.ts';
import { isStalledOut } from '../../shared/queue/stalled-out.ts';
import { WEBHOOK_MAX_STALLED_COUNT, type WebhookJobData } from '../../shared/queue/webhook-queue.ts';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import { createBanRepublisher } from '../bans/ban-republisher.ts';
import { watchBanVersion } from '../bans/watch-ban-version.ts';
import { publishAllBans, publishBans } from '../bans/publish-bans.ts';
import type { Activity } from '../domain/activity.ts';
import type { BanChange } from '../domain/ban-change.ts';
import type { StoredEvent } from '../domain/stored-event.ts';
import type { InboxRecord } from '../domain/inbox-record.ts';
import type { RemovedRecord, TrayStorage } from '../storage/port.ts';
import { OUTAGE_RETRIES, runPastStorageFailures } from '../storage/run-past-storage-failures.ts';
import { PurgeError } from '../storage/purge-error.ts';
import { applyJob, type ApplyJobDeps, type ScheduleFanOut } from '../use-cases/apply-job.ts';
import type { TrayChanges } from '../use-cases/tray-changes.ts';
import { closeQueueAtGate, createStorageGate, type StorageGateOptions } from '../storage/storage-gate.ts';
import { createWorkerMetrics } from './worker-metrics.ts';
import { logQueueErrors } from '../../shared/queue/log-queue-errors.ts';
import { trackJobHandlers, trackRunningJobs } from '../../shared/queue/running-jobs.ts';

/**
 * Posts of one community in one fan-out at most: the adapter writes every member's record for all
 * of them at once, and a fan-out that fails runs again post by post (keyedBatches), so a post that
 * cannot be fanned out fails its own job only.
 */
const POSTS_PER_FAN_OUT = 32;

/**
 * How long a community's first post waits for more posts of its community before its fan-out.
 * Posts delivered together reach the worker a few milliseconds apart; without the wait the first
 * would be fanned out alone and the rest after it, rewriting every member's record twice.
 */
const FAN_OUT_GATHER_MS = 25;

/** Outages one attempt of a job may meet before it is spent (runPastStorageFailures). */
export const WORKER_OUTAGE_RETRIES = OUTAGE_RETRIES;

export interface WorkerDeps {
  queue: BullQueue<WebhookJobData>;
  storage: TrayStorage;
  logger: Logger;
  registry: Registry;
  /** TRAY_WORKER_CONCURRENCY. */
  concurrency?: number;
  eventsRetentionDays?: number;
  trayRetentionDays?: number;
  /** NETWORK_ID: the block list a deleted user's own list is removed from. */
  networkId: string;
  /** TRAY_PURGE_INTERVAL_MS; 0 turns the periodic purge off (tests call purgeExpired directly). */
  purgeIntervalMs?: number;
  /** TRAY_FANOUT_CONCURRENCY: community-post fan-outs at once (default 4). */
  fanOutConcurrency?: number;
  /**
   * Where stored ban changes are published for the API: BAN_REDIS_PREFIX on the queue's Redis
   * unless a connection is given. Default prefix `tray-bans`.
   */
  bans?: { prefix: string; redis?: RedisClient; checkMs?: number };
  /** Whose events are applied (TRAY_PLATFORM_WEBHOOKS); unset: deliveries of the platform's scheme. */
  platformWebhooks?: ApplyJobDeps['platformWebhooks'];
  /** The moderation step plugs in here: called once per processed job, after the event is stored. */
  onStored?: ApplyJobDeps['onStored'];
  /** Where each event is announced once first applied (the events console's live tail); none without it. */
  announce?: (event: StoredEvent) => Promise<void>;
  /** Where record writes are announced to live streams (docs/live-tray.md); none without it. */
  changes?: Pick<TrayChanges, 'recordsWritten' | 'recordsRemoved' | 'cleared'>;

  /** Asks the process to stop (exit 1) when bull could not start taking the queue's jobs. */
  onStopped?: (reason: string) => void;

  /** How the worker probes the storage during an outage (tests shorten it). */
  storageProbe?: Pick<StorageGateOptions, 'firstProbeMs' | 'maxProbeMs' | 'probeTimeoutMs'>;
  /** The first wait after the storage said "not now" to a job (runPastStorageFailures; tests shorten it). */
  storageBusyFirstWaitMs?: number;
}

export interface RunningWorker {
  close(): Promise<void>;
  /**
   * Resolves once no purge runs: one the shutdown cut short ends when the storage closes under it,
   * and says so, which the shutdown awaits before it says it stopped.
   */
  settled(): Promise<void>;
}

/** How often the worker checks that the published ban set's version is still in Redis. */
export const BAN_VERSION_CHECK_MS = 10_000;

/** The bull adapter of the tray: each job of the webhook queue goes to the apply-job use case. */
export async function startWorker(deps: WorkerDeps): Promise<RunningWorker> {
  const bans = { redis: deps.bans?.redis ?? deps.queue.client, prefix: deps.bans?.prefix ?? 'tray-bans' };
  // Redis may have lost the published set (a restart without persistence, a new instance): storage
  // holds every ban, and republishing keeps whatever newer change Redis has. Again after each
  // reconnect: a Redis that came back empty would otherwise serve no ban until the next start.
  // A set gone, or gone back to an older one, with no reconnect seen and no ban event coming: one
  // GET per interval finds it (watchBanVersion).
  const watch = watchBanVersion({
    redis: bans.redis,
    prefix: bans.prefix,
    everyMs: deps.bans?.checkMs ?? BAN_VERSION_CHECK_MS,
    onStale: () => republisher.request(),
    logger: deps.logger,
  });
  const republishBans = async () =>
    watch.observe(await publishAllBans(bans.redis, bans.prefix, await deps.storage.bans.all(), watch.seen()));
  const republisher = createBanRepublisher({ republish: republishBans, logger: deps.logger });
  try {
    await republishBans();
  } catch (error) {
    watch.stop();
    republisher.close();
    throw error;
  }
  const onReconnected = () => republisher.request();
  bans.redis.on('ready', onReconnected);
  const metrics = createWorkerMetrics(deps.registry);
  metrics.gateOpen.set(1);
  const fanOuts = pLimit(deps.fanOutConcurrency ?? 4);
  // A fan-out costs about the same for one post as for many: posts to a community that arrive
  // within the gather or while its fan-out runs go together.
  const batchPosts = keyedBatches<Activity>({ maxBatch: POSTS_PER_FAN_OUT, gatherMs: FAN_OUT_GATHER_MS });
  const scheduleFanOut: ScheduleFanOut = (key, post, fanOut) =>
    batchPosts(key, post, (posts) => fanOuts(() => fanOut(posts)));
  const { changes } = deps;
  const applyDeps = {
    storage: deps.storage,
    eventsRetentionDays: deps.eventsRetentionDays ?? 30,
    trayRetentionDays: deps.trayRetentionDays ?? 90,
    networkId: deps.networkId,
    publishBans: async (changed: readonly BanChange[]) => {
      // A Redis that lost the set, or went back to an older one (no reconnect seen: a cluster
      // failover), gets every stored ban.
      const seen = watch.seen();
      const published = await publishBans(bans.redis, bans.prefix, changed, seen);
      if (published.wentBack)
        deps.logger.warn(
          { version: published.version, seen },
          'the published ban list went back to an older version; publishing it again',
        );
      if (published.version !== undefined) watch.observe(published.version);
      watch.published(changed);
      if (published.setLost || published.wentBack) republisher.request();
    },
    scheduleFanOut,
    ...(deps.platformWebhooks ? { platformWebhooks: deps.platformWebhooks } : {}),
    ...(deps.onStored ? { onStored: deps.onStored } : {}),
    ...(deps.announce ? { onApplied: deps.announce } : {}),
    ...(changes
      ? {
          onWritten: (records: readonly InboxRecord[]) => changes.recordsWritten(records),
          onRemoved: (records: readonly RemovedRecord[]) => changes.recordsRemoved(records),
          onCleared: (userId: string, at: number) => changes.cleared(userId, at),
        }
      : {}),
  };

  // While the storage does not answer, the worker takes no jobs (a local pause: other workers
  // decide for themselves) and the jobs it holds wait for it, so an outage costs no attempts.
  const gate = createStorageGate({
    ping: () => deps.storage.ping(),
    logger: deps.logger,
    onChange: (open) => {
      metrics.gateOpen.set(open ? 1 : 0);
      const change = open ? deps.queue.resume(true) : deps.queue.pause(true, true);
      // Redis may be down too: the local pause holds anyway, and resuming needs no server.
      change.catch(() => undefined);
    },
    ...deps.storageProbe,
  });

  // `timer` adds up the job's runs only: the waits at the gate and between busy runs are no
  // processing time (tray_worker_job_duration_seconds).
  const apply = async (data: WebhookJobData, timer: { ms: number }, by: string) => {
    const run = async () => {
      const started = performance.now();
      try {
        return await applyJob(data, applyDeps, { by });
      } finally {
        timer.ms += performance.now() - started;
      }
    };
    return runPastStorageFailures(gate, run, {
      logger: deps.logger,
      job: { key: data.dedupeKey },
      busyFirstWaitMs: deps.storageBusyFirstWaitMs,
    });
  };

  // A webhook left out of TRAY_PLATFORM_WEBHOOKS by mistake (a typo, a new region) would leave
  // the tray silently behind: said once per webhook and process, when its first event is stored.
  const warnedForeign = new Set<string>();
  const warnForeign = (webhook: string) => {
    if (warnedForeign.has(webhook)) return;
    warnedForeign.add(webhook);
    deps.logger.warn(
      { webhook },
      "events of a webhook that is not the platform's are stored as foreign and not applied (TRAY_PLATFORM_WEBHOOKS)",
    );
  };

  /** Set by close(): what fails after it met the connections and storage the shutdown closed. */
  let closed = false;
  /** Jobs in flight, parked ones included: the shutdown cuts the queue after the others. */
  const running = trackRunningJobs(deps.queue);
  const handlers = trackJobHandlers(deps.queue);
  /** Jobs whose run here failed (said by the handler): bull's `failed` for any other is its own. */
  const failedHere = new WeakSet<Bull.Job<WebhookJobData>>();
  const processing = deps.queue.process(deps.concurrency ?? 4, async (job) => {
    const timer = { ms: 0 };
    try {
      // The attempt, as bull numbers it: the same for its runs here and for its run again after a
      // stall (which spends no attempt), so a run after a lost answer finds its own applied mark.
      // And the job's creation time: the id is the event's, so a job queued again for it once the
      // first was removed (a redelivery past the dedupe window, a replayed spool) starts from the
      // same attempt 0, and would take the first job's mark for its own.
      const by = `${String(job.id)}@${job.timestamp}#${job.attemptsMade}`;
      const { event: stored, first } = await apply(job.data, timer, by);
      metrics.jobs.inc({ outcome: 'completed' });
      // Once per event: a retry after it finished, a redelivery or a replay stores nothing new.
      if (first) {
        metrics.events.inc({ status: stored.status });
        if (stored.status === 'foreign') warnForeign(stored.webhook);
        if (stored.status === 'invalid') {
          deps.logger.warn(
            { event: stored.event, key: stored.key, error: stored.error },
            'invalid event payload stored',
          );
        }
      }
      return { status: stored.status };
    } catch (error) {
      failedHere.add(job);
      const attempt = job.attemptsMade + 1;
      const failure = { key: job.data.dedupeKey, attempt, err: (error as Error).message };
      // Its last attempt: bull puts it in the failed set, where only a replay brings it back.
      if (attempt >= (job.opts.attempts ?? 1)) {
        metrics.jobs.inc({ outcome: 'dead_lettered' });
        deps.logger.error(failure, 'job failed on its last attempt: in the failed set, replayable');
      } else {
        metrics.jobs.inc({ outcome: 'failed' });
        deps.logger.warn(failure, 'job failed; bull retries it with backoff');
      }
      throw error;
    } finally {
      // A job the worker closed on before it ran (held at the gate) is not observed.
      if (timer.ms > 0) metrics.duration.observe(timer.ms / 1000);
    }
  });
  watchProcessing(processing, {
    name: 'webhook',
    logger: deps.logger,
    closing: () => closed,
    onStopped: deps.onStopped,
  });

  // A job bull failed for stalling too often (its worker stopped mid-job each time) gets no retry and
  // runs none of the code above: said here, by the process whose stalled check failed it.
  const onFailed = (job: Bull.Job<WebhookJobData> | null, error: Error) => {
    if (job && !isStalledOut(error) && !failedHere.has(job)) {
      // The run finished and its effects are stored, but bull's write of the completion failed on
      // Redis (a command timing out, a reconnect), and bull failed the job with that error: spent
      // an attempt, its rerun a no-op; on its last, it went to the failed set unsaid.
      // Not a dead letter: it was counted completed, and nothing is left to replay.
      metrics.jobs.inc({ outcome: 'completion_unrecorded' });
      const failure = { key: job.data.dedupeKey, jobId: job.id, err: error.message };
      if (job.attemptsMade >= (job.opts.attempts ?? 1)) {
        deps.logger.error(
          failure,
          'job finished, but its completion could not be recorded: in the failed set; its effects are stored, so a replay changes nothing',
        );
      } else
        deps.logger.warn(
          failure,
          'job finished, but its completion could not be recorded; bull runs it again, which changes nothing',
        );
      return;
    }
    if (!isStalledOut(error)) return;
    metrics.jobs.inc({ outcome: 'stalled_out' });
    deps.logger.error(
      { key: job?.data.dedupeKey, jobId: job?.id, maxStalledCount: WEBHOOK_MAX_STALLED_COUNT },
      'job failed: it stalled more often than bull allows (its worker stopped mid-job each time); in the failed set, replayable',
    );
  };
  const onStalled = (job: Bull.Job<WebhookJobData>) => {
    deps.logger.warn(
      { key: job.data.dedupeKey, jobId: job.id },
      'job stalled (its worker stopped mid-job); run again, no attempt spent',
    );
  };
  deps.queue.on('failed', onFailed);
  deps.queue.on('stalled', onStalled);
  const stopLoggingQueueErrors = logQueueErrors(deps.queue, deps.logger, {
    name: 'webhook',
    jobFields: (job) => ({ key: job.data.dedupeKey }),
  });

  const purgeIntervalMs = deps.purgeIntervalMs ?? 3_600_000;
  let purging = false;
  let purgeEnded: Promise<undefined> = Promise.resolve(undefined);
  const purge = async () => {
    // A purge that outlasts the interval (a backlog after an outage, a huge table) is left to
    // finish: setInterval does not wait for it, and each purge started beside it would read the
    // same expired rows again and add to the load.
    if (purging) {
      deps.logger.warn({ purgeIntervalMs }, 'purge still running at the next interval; this one skipped');
      return;
    }
    purging = true;
    const ended = Promise.withResolvers<undefined>();
    purgeEnded = ended.promise;
    const logPurged = (purged: { records: number; events: number }) => {
      if (purged.records + purged.events > 0) deps.logger.info(purged, 'purged expired records and events');
    };
    try {
      logPurged(await deps.storage.purgeExpired(new Date()));
    } catch (error) {
      // The storage closed under it by the shutdown: no failure of the purge, which the next start
      // runs again (warned once per table, each shutdown during a purge looked like an outage).
      if (closed) {
        deps.logger.info('purge cut short by the shutdown; it runs again at the next start');
        return;
      }
      if (error instanceof PurgeError) {
        // Every other table was purged: each failure once, by table.
        logPurged(error.purged);
        for (const { table, error: cause } of error.failures)
          deps.logger.warn(
            { table, err: cause },
            `purge of ${table} failed (${redactUrlCredentials(cause.message)}); retried at the next interval`,
          );
      } else deps.logger.warn({ err: error }, 'purge failed; retried at the next interval');
    } finally {
      purging = false;
      ended.resolve(undefined);
    }
  };
  if (purgeIntervalMs > 0) void purge();
  const timer = purgeIntervalMs > 0 ? setInterval(() => void purge(), purgeIntervalMs) : undefined;
  timer?.unref();

  return {
    close: async () => {
      closed = true;
      clearInterval(timer);
      bans.redis.off('ready', onReconnected);
      watch.stop();
      republisher.close();
      await closeQueueAtGate(gate, deps.queue, running, handlers);
      deps.queue.off('failed', onFailed);
      deps.queue.off('stalled', onStalled);
      stopLoggingQueueErrors();
    },
    settled: () => purgeEnded,
  };
}
