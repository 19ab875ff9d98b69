import { logRedisOutage } from '../shared/redis/log-redis-outage.ts';
import type { RequestListener } from 'node:http';
import type { Registry } from 'prom-client';
import type { MetricsAccess } from '../shared/http/metrics-access.ts';
import type { Logger } from '../shared/logging/create-logger.ts';
import { isCluster, type RedisTarget } from '../shared/redis/redis-target.ts';
import type { EncodedWebhookJob } from '../shared/queue/webhook-queue.ts';
import { createReceiverApp } from './create-receiver-app.ts';
import { createReceiverMetrics } from './receiver-metrics.ts';
import { queueGaugeNames, registerQueueDepthGauge } from '../shared/queue/queue-depth-gauge.ts';
import type { WebhookSettings } from './http/create-webhook-handler.ts';
import { openSpool, type Spool } from './spool/open-spool.ts';
import { startSpoolDrainer, type SpoolDrainer } from './spool/start-spool-drainer.ts';
import { createReceiverQueue, type ReceiverQueue } from './store/create-receiver-queue.ts';
import { batchPerTick } from './store/batch-per-tick.ts';
import { enqueueMany, enqueueOnce, ReplicaFence } from './store/enqueue-once.ts';
import { dropConnection } from '../shared/redis/drop-connection.ts';
import { createHungRedisBreaker } from '../shared/redis/hung-redis-breaker.ts';
import { createRedisWriteHealth } from './store/redis-write-health.ts';

export interface ReceiverWiring {
  /** A Redis URL or a cluster; on a cluster, enqueues wait for a replica (ReplicaFence). */
  redis: RedisTarget;
  queuePrefix: string;
  spoolDir: string;
  webhookPath: string;
  dedupeSeconds: number;
  /** Budget of one Redis call carrying a batch of events; past it, the batch's events are spooled. */
  enqueueTimeoutMs: number;
  settings: WebhookSettings;
  logger: Logger;
  registry: Registry;
  /** Who may read /metrics on the receiver's port (METRICS_TOKEN; off by default). */
  metrics: MetricsAccess;
  /** How often the drainer retries while the spool holds events. */
  drainIntervalMs?: number;
  /** How long a call may stay unanswered before the Redis connection is dropped (default 5 s). */
  hungRedisReconnectMs?: number;
  /**
   * Checks of the queue's Redis the spool's drainer waits for (main.ts: that it never evicts keys,
   * which exits the process otherwise): spooled events must not go into a Redis about to be refused.
   */
  beforeDraining?: (client: ReceiverQueue['client']) => Promise<void>;
}

/** Budget of one drainer add: it has no caller waiting, so it may wait longer than a request. */
const DRAIN_ENQUEUE_BUDGET_MS = 5_000;

export interface Receiver {
  /** The HTTP app (createReceiverApp), for `http.createServer` or supertest. */
  app: RequestListener;
  spool: Spool;
  drainer: SpoolDrainer;
  queue: ReceiverQueue;
  /** Settles once beforeDraining's checks have: the drainer starts then. */
  checked: Promise<void>;
  /**
   * Stops the drainer, closes the spool and Redis. Call after the HTTP server has closed.
   * `drainForMs`: what the drainer may spend queueing the spool's events first (SpoolDrainer.stop).
   */
  close(drainForMs?: number): Promise<void>;
}

/** Real dependencies of the receiver: its queue connection, spool and drainer (main.ts, tests, bench). */
export async function wireReceiver(wiring: ReceiverWiring): Promise<Receiver> {
  const { logger } = wiring;
  const queue = createReceiverQueue(wiring.redis, wiring.queuePrefix);
  // Without a listener an 'error' event would crash the process; ioredis reconnects by itself.
  queue.queue.on('error', (error: Error) => logger.debug({ err: error.message }, 'queue connection error'));
  queue.client.on('error', (error: Error) => logger.debug({ err: error.message }, 'redis connection error'));
  // Once per outage, as the tray logs its connections' (docs/operations.md): each error above is
  // a reconnect attempt, at debug.
  logRedisOutage(queue.client, logger, 'queue');
  const spool = await openSpool(wiring.spoolDir, {
    onCorruptLine: (segment) => logger.warn({ segment }, 'skipped an incomplete spool line (torn write)'),
    onDeleteFailed: (segment, error) =>
      logger.warn(
        { segment, err: (error as NodeJS.ErrnoException).code ?? (error as Error).message },
        'could not delete a drained spool segment; every drain pass retries it',
      ),
    onForeignEntry: (path, reason) =>
      logger.warn(
        { path, reason },
        'left alone an entry of SPOOL_DIR this receiver did not write; its events are not queued',
      ),
    onTakeOverFailed: (path, error) =>
      logger.warn(
        { path, err: (error as NodeJS.ErrnoException).code ?? (error as Error).message },
        "could not take over a stopped receiver's spool folder; its events stay on disk, tried again at every check",
      ),
  });
  // Counted while the receiver already listens: a long outage's spool takes seconds to read.
  void spool.counted.then((depth) => {
    if (depth > 0) logger.info({ depth }, 'spool holds events from an earlier run');
  });
  const target = {
    queue: queue.queue,
    redis: queue.client,
    markPrefix: wiring.queuePrefix,
    dedupeSeconds: wiring.dedupeSeconds,
    // A third of the enqueue budget for the replica's confirmation: on loopback or in one data
    // centre it takes well under a millisecond, and a missing one must leave time to spool.
    ...(isCluster(wiring.redis)
      ? {
          fence: new ReplicaFence(Math.max(10, Math.round(wiring.enqueueTimeoutMs / 3)), (message) =>
            logger.warn(
              { err: message },
              'the Redis user may not run ROLE: every enqueue waits for a replica (grant +role, or keep a replica per master, or every event is spooled)',
            ),
          ),
        }
      : {}),
  };
  // The events of one turn of the event loop go to Redis in one script call, up to 100 events or
  // 1 MiB of job data, so one call never holds Redis for long (bodies may be up to 1 MiB each).
  // The acknowledgement budget is kept per call, not per request: one timer per batch instead of
  // one per event (BENCHMARKS.md, "Receiver"). A batch that times out may still complete in Redis;
  // its events are spooled too, and the job id makes the drainer's later add of them a no-op.
  // While a call is in flight, the events of the next turns wait for it and then go together: under
  // load a call carries more events, and Redis's and ioredis's work per call is shared by more of
  // them, while at a low rate an event goes at once. An event waits at most a tenth of the budget
  // for the call in flight (a call takes a few ms under full load), so with the longest budget
  // allowed (1 s) it is answered well inside the platform's 1.5 s (BENCHMARKS.md, "Receiver").
  // A call that runs out of its budget stops every later one until Redis answers it, and one still
  // unanswered after hungRedisReconnectMs has the connection dropped (hung-redis-breaker.ts): a
  // Redis that takes commands without answering must not collect every later event in memory.
  const breaker = createHungRedisBreaker({
    reconnectAfterMs: wiring.hungRedisReconnectMs ?? 5_000,
    reconnect: () => {
      logger.warn('Redis left a call unanswered too long; dropping the connection and connecting again');
      dropConnection(queue.client);
    },
    onOpen: () => logger.warn('Redis did not answer within the budget; spooling events until it does'),
    onClose: () => logger.info('Redis answers again; events go to the queue'),
  });
  // Whether Redis takes writes, for /readyz: every enqueue and drain reports how it ended.
  const writes = createRedisWriteHealth(queue.client, wiring.queuePrefix);
  const { enqueueTimeoutMs } = wiring;
  // How long an event may wait for the call ahead of it before it is sent anyway.
  const maxHoldMs = Math.ceil(enqueueTimeoutMs / 10);
  const enqueue = batchPerTick(
    (jobs: readonly EncodedWebhookJob[]) =>
      breaker.call(() => writes.observe(enqueueMany(target, jobs)), enqueueTimeoutMs),
    {
      maxItems: 100,
      maxWeight: 1024 * 1024,
      weight: (job) => job.json.length,
      maxInFlight: 1,
      maxHoldMs,
    },
  );
  // One set of metrics for the app and the drainer: the drainer counts what it moves out of the spool.
  const receiverMetrics = createReceiverMetrics(
    wiring.registry,
    () => spool.depth(),
    () => spool.foreignEntries(),
  );
  registerQueueDepthGauge(wiring.registry, queueGaugeNames.receiver, [queue.queue]);
  const app = createReceiverApp({
    logger,
    redis: writes.check,
    registry: wiring.registry,
    metrics: wiring.metrics,
    receiverMetrics,
    spool,
    enqueue,
    webhookPath: wiring.webhookPath,
    settings: wiring.settings,
    // Its budget and the hold before it.
    enqueueBoundMs: enqueueTimeoutMs + maxHoldMs,
  });
  // The drainer adds one event at a time, in spool order, under its own (longer) budget.
  const checked = wiring.beforeDraining?.(queue.client) ?? Promise.resolve();
  const drainer = startSpoolDrainer({
    startAfter: checked,
    spool,
    enqueue: (job) => breaker.call(() => writes.observe(enqueueOnce(target, job)), DRAIN_ENQUEUE_BUDGET_MS),
    // The queue connection keeps no offline queue: until it is ready, every enqueue fails at once.
    // Redis at maxmemory (OOM), demoted (READONLY) or refusing scripts (NOPERM) answers, but takes
    // no event: a probe write says so without reading a segment.
    blocked: async () => {
      if (queue.client.status !== 'ready') return 'Redis is not connected';
      if (breaker.open) return 'Redis calls are failing';
      // Under the breaker: a probe that hangs is an unanswered call, as an enqueue would be.
      const refused = await breaker.call(() => writes.refusal(), DRAIN_ENQUEUE_BUDGET_MS);
      return refused === undefined ? undefined : `Redis refuses writes: ${refused}`;
    },
    enqueueTimeoutMs: DRAIN_ENQUEUE_BUDGET_MS,
    logger,
    intervalMs: wiring.drainIntervalMs,
    onDrained: (outcome) => receiverMetrics.spoolDrained.inc({ outcome }),
  });
  return {
    app,
    spool,
    drainer,
    queue,
    checked,
    async close(drainForMs) {
      await drainer.stop(drainForMs);
      await spool.close();
      await queue.close();
    },
  };
}
