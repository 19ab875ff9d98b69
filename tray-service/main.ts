import { loadOrExit } from '../shared/config/load-or-exit.ts';
import { loadTrayConfig } from '../shared/config/tray-config.ts';
import { resolveTrayStorage } from '../shared/config/tray-storage-config.ts';
import { createOpsApp } from '../shared/http/create-ops-app.ts';
import type { Server } from 'node:http';
import { closeServer, drainGraceMs, listen, listenedOrExit, warnCut } from '../shared/http/listen.ts';
import { listenMetrics } from '../shared/http/listen-metrics.ts';
import { metricsAccessFor } from '../shared/http/metrics-access.ts';
import { createMetricsRegistry } from '../shared/http/metrics-router.ts';
import { createLogger } from '../shared/logging/create-logger.ts';
import { exitOnUncaught } from '../shared/process/exit-on-uncaught.ts';
import { onShutdown } from '../shared/process/on-shutdown.ts';
import { shutdownSteps } from '../shared/process/shutdown-steps.ts';
import { dependencyOrExit } from '../shared/process/wait-for-dependency.ts';
import { createWebhookQueue } from '../shared/queue/webhook-queue.ts';
import { queueGaugeNames, registerQueueDepthGauge } from '../shared/queue/queue-depth-gauge.ts';
import { createRedis, pingRedis } from '../shared/redis/create-redis.ts';
import { redisTakesWrites } from '../shared/redis/redis-takes-writes.ts';
import { logRedisOutage } from '../shared/redis/log-redis-outage.ts';
import { isRedisAuthError } from '../shared/redis/redis-failure.ts';
import { refuseEvictingRedis } from '../shared/redis/refuse-evicting-redis.ts';
import { refuseMissingDatabase } from '../shared/redis/refuse-missing-database.ts';
import { isCluster } from '../shared/redis/redis-target.ts';
import { adminDepsFromConfig } from './admin/admin-deps-from-config.ts';
import { createAdminApp } from './admin/create-admin-app.ts';
import { adminAuthConfigured } from './admin/require-admin.ts';
import { listenHostOf, listenHostVariable } from '../shared/config/listen-config.ts';
import {
  adminJwtKeys,
  checkAdminPort,
  resolveAdminJwt,
  userJwtKeys,
} from '../shared/config/tray-admin-access-config.ts';
import { resolveJwtConfig } from '../shared/config/tray-api-config.ts';
import { startBanCache } from './http/auth/ban-cache.ts';
import { cacheVerifiedTokens } from './http/auth/cache-verified-tokens.ts';
import { createTokenVerifier } from './http/auth/create-token-verifier.ts';
import { createAdminJwtVerifier } from './admin/admin-jwt-verifier.ts';
import { createTrayApi } from './api/create-tray-api.ts';
import { createChangePublisher } from './live/change-publisher.ts';
import { createEventAnnouncer } from './admin/event-announcer.ts';
import { createRedisEventsFeed } from './admin/redis-events-feed.ts';
import { publishAllBans, publishBans } from './bans/publish-bans.ts';
import { createLiveTray } from './live/create-live-tray.ts';
import { liveRoutes } from './live/live-routes.ts';
import { demoRoutes } from './demo/demo-routes.ts';
import { createRateLimiter } from './http/rate-limit/create-rate-limiter.ts';
import { createFailedAuthLimit } from './http/rate-limit/failed-auth-limit.ts';
import { createMessageRenderer } from './messages/create-message-renderer.ts';
import { loadBlockedWords } from './moderation/load-blocked-words.ts';
import { setupModeration } from './moderation/setup-moderation.ts';
import { PLATFORM_SCHEME_ONLY, type PlatformWebhooks } from './domain/platform-webhooks.ts';
import { openStorage } from './storage/open-storage.ts';
import { isPermanentStorageError } from './storage/permanent-storage-error.ts';
import { startWorker } from './worker/start-worker.ts';
import { startSnoozeWakeLoop, type SnoozeWakeLoop } from './worker/snooze-wake-loop.ts';

const config = loadOrExit(() => loadTrayConfig(process.env));
// TRAY_ROLE: the API with its streams, the queue's worker, or both (docs/scaling.md).
const runsApi = config.TRAY_ROLE !== 'worker';
const runsWorker = config.TRAY_ROLE !== 'api';
// The whole configuration is checked before anything is loaded or logged: a bad value is the one
// line the process prints.
// API token keys: exactly one key source, checked before anything connects (the API needs them).
// A worker needs none, but checks those set as the API would: one environment file may serve every
// role, and a worker started to try it must not pass what the API processes then refuse.
const jwtKeySet = config.JWT_SECRET ?? config.JWT_PUBLIC_KEY ?? config.JWT_JWKS_URL;
const jwtConfig = runsApi || jwtKeySet !== undefined ? loadOrExit(() => resolveJwtConfig(config)) : undefined;
// Admin credentials: ADMIN_TOKEN and/or admin JWTs with their own audience and issuer, never a
// user token's claims (docs/operations.md#admin-authentication).
const adminJwt = loadOrExit(() => {
  const resolved = resolveAdminJwt(config);
  checkAdminPort(config, config.ADMIN_TOKEN !== undefined || resolved !== undefined);
  return resolved;
});
// Which storage adapter, and its connection: an ambiguous or missing choice stops start-up here,
// still before anything connects.
const storageConfig = loadOrExit(() => resolveTrayStorage(config));
// Blocklisted words are read at start-up, so a missing MODERATION_WORDS_FILE stops it at once.
const words = loadOrExit(() =>
  loadBlockedWords({
    words: config.MODERATION_WORDS,
    file: config.MODERATION_WORDS_FILE,
    mode: config.MODERATION_MATCH,
  }),
);
const logger = createLogger({ name: 'tray-service', level: config.LOG_LEVEL });
exitOnUncaught(logger);
// Catalogues are checked and compiled before anything connects: a broken one stops start-up.
const messages = loadOrExit(() =>
  createMessageRenderer({ defaultLocale: config.DEFAULT_LOCALE, overrideDir: config.TRAY_MESSAGES_DIR }),
);
logger.info({ locales: messages.locales, defaultLocale: messages.defaultLocale }, 'tray messages loaded');
// A key set fetched from an identity provider may sign tokens for its other apps and tenants too,
// with the same audience at times: only the issuer says a token is this deployment's.
if (runsApi && jwtConfig?.source.kind === 'jwks' && jwtConfig.issuer === undefined)
  logger.warn(
    { variable: 'JWT_ISSUER' },
    "JWT_JWKS_URL without JWT_ISSUER: any token the key set signs for JWT_AUDIENCE is accepted, whichever issuer made it; set JWT_ISSUER to your provider's",
  );
const registry = createMetricsRegistry('tray-service');
// The tray's storage (TRAY_STORAGE: PostgreSQL by default, or MongoDB), its schema brought up to
// date. A database not answering yet (started beside this process, restarting) is waited for, up
// to TRAY_STARTUP_WAIT_MS, like Redis below (docs/operations.md#before-exposing-a-port).
const storage = await dependencyOrExit(logger, {
  variable: storageConfig.engine === 'postgres' ? 'DATABASE_URL' : 'MONGODB_URI',
  connect: () =>
    openStorage(storageConfig, logger, {
      fanOutBatch: config.TRAY_FANOUT_BATCH,
      retentionDays: config.TRAY_RETENTION_DAYS,
    }),
  isPermanent: isPermanentStorageError,
  // The attempt runs the schema's migrations too, which may rightly take minutes. Each adapter
  // bounds the server's first answer instead (PostgreSQL: 5 s, await-first-answer.ts; MongoDB:
  // its driver's 2 s server selection), so a server that never answers still ends the wait.
  boundAttempts: false,
  waitMs: config.TRAY_STARTUP_WAIT_MS,
});
const redis = createRedis(config.redis);
// What /readyz writes to see that Redis takes writes: under the queue's prefix (one slot on a cluster).
const redisProbeKey = `${config.QUEUE_PREFIX}:tray-write-probe`;
logRedisOutage(redis, logger, 'commands');
// Start-up reads and writes Redis (the eviction check, the ban set): it waits for it first.
await dependencyOrExit(logger, {
  variable: isCluster(config.redis) ? 'REDIS_CLUSTER_NODES' : 'REDIS_URL',
  connect: () => pingRedis(redis),
  isPermanent: isRedisAuthError,
  waitMs: config.TRAY_STARTUP_WAIT_MS,
});
// A Redis that may evict keys would silently lose queued events, and one that refused the database
// REDIS_URL names would mix them with another deployment's: refused, also after a reconnect.
await Promise.all([refuseEvictingRedis(redis, { logger }), refuseMissingDatabase(redis, { logger })]);
const queue = createWebhookQueue(
  { redis: config.redis, prefix: config.QUEUE_PREFIX },
  undefined,
  { firstMs: config.TRAY_RETRY_FIRST_DELAY_MS, maxMs: config.TRAY_RETRY_MAX_DELAY_MS },
  config.TRAY_JOB_LOCK_MS,
);

// Whose events change the tray: the worker and every replay judge a delivery alike.
const platformWebhooks: PlatformWebhooks =
  config.TRAY_PLATFORM_WEBHOOKS === undefined
    ? PLATFORM_SCHEME_ONLY
    : { names: new Set(config.TRAY_PLATFORM_WEBHOOKS) };
logger.info(
  { platformWebhooks: config.TRAY_PLATFORM_WEBHOOKS ?? 'those signed with the platform scheme' },
  'platform webhooks: only their events change the tray',
);

// Moderation: the worker's rules and the decisions' delivery; the admin API reads its decisions.
const moderation = await setupModeration(config, {
  decisions: storage.decisions,
  ping: () => storage.ping(),
  logger,
  words,
  deliver: runsWorker,
  onStopped: (reason) => stop(reason),
});

// Backlogs and dead letters for operators' alerts (docs/operations.md#health-metrics-and-shutdown).
registerQueueDepthGauge(
  registry,
  queueGaugeNames.tray,
  moderation.queue ? [queue, moderation.queue] : [queue],
);

// The events console's live tail: each event once applied, by the worker or by a replay that
// finished it first (its job still retrying or dead-lettered).
const announce = createEventAnnouncer(redis, config.STREAM_REDIS_PREFIX, logger);

/**
 * What start-up has started so far, for the shutdown registered below. It is registered before the
 * worker starts taking jobs: a SIGTERM from then on (a rollout superseded, a scale-down while
 * starting) stops what runs, the worker's jobs finished, where Node's default ended the process by
 * the signal mid-job. What starts after the signal is ended by the process's exit.
 */
const started: {
  wakeLoop?: SnoozeWakeLoop;
  api?: Awaited<ReturnType<typeof startApi>>;
  servers: Server[];
} = { servers: [] };

const workerStarting = runsWorker
  ? startWorker({
      queue,
      storage,
      logger,
      registry,
      concurrency: config.TRAY_WORKER_CONCURRENCY,
      eventsRetentionDays: config.EVENTS_RETENTION_DAYS,
      trayRetentionDays: config.TRAY_RETENTION_DAYS,
      networkId: config.NETWORK_ID,
      purgeIntervalMs: config.TRAY_PURGE_INTERVAL_MS,
      fanOutConcurrency: config.TRAY_FANOUT_CONCURRENCY,
      bans: { prefix: config.BAN_REDIS_PREFIX, redis },
      platformWebhooks,
      onStored: moderation.step,
      changes: createChangePublisher(redis, config.STREAM_REDIS_PREFIX, logger),
      announce,
      onStopped: (reason) => stop(reason),
    })
  : Promise.resolve(undefined);

const stop = onShutdown(
  logger,
  async () => {
    const steps = shutdownSteps();
    // Stop accepting first (closeServer does at once, then drains): a stream opening later would
    // miss the streams' close below and hold the drain. One still being authorised now opens on a
    // closed hub, which ends it at once with a retry hint.
    const cut = warnCut(logger);
    const graceMs = drainGraceMs(config.SHUTDOWN_DEADLINE_MS);
    const drained = Promise.all(
      started.servers.map((server) => steps.run(() => closeServer(server, graceMs, cut))),
    );
    // The worker stops alongside the HTTP drain, not after it: a slow client holding the drain must
    // not keep the worker taking jobs until the deadline kills it mid-job. One still starting is
    // stopped once it has.
    // So do the moderation decisions' deliveries: each taken during the drain would hold the
    // shutdown for up to MODERATION_WEBHOOK_TIMEOUT_MS after it.
    const worker = await workerStarting.catch(() => undefined);
    const { wakeLoop } = started;
    const stopped = Promise.all([
      wakeLoop && steps.run(() => wakeLoop.stop()),
      worker && steps.run(() => worker.close()),
      steps.run(() => moderation.stopTaking()),
    ]);
    const { api } = started;
    await Promise.all([drained, stopped, api && steps.run(() => api.closeStreams())]);
    await steps.run(() => api?.stop());
    await steps.run(() => moderation.close());
    // A worker closes its queue itself, or leaves it when its jobs wait on a storage that went away
    // (they stall, and another worker runs them): closing it again here would wait for those very
    // jobs, for ever.
    if (!worker) await steps.run(() => queue.close());
    await steps.run(() => redis.disconnect());
    await steps.run(() => storage.close());
    // A purge the storage's closing cut short says so before the shutdown says it stopped.
    await steps.run(() => worker?.settled());
    steps.finish();
  },
  config.SHUTDOWN_DEADLINE_MS,
);

await workerStarting;

// Every tray process, whatever its role, wakes ended snoozes: the storage claims each record for
// one of them, and the woken records reach every instance's streams through Redis.
const wakeLoop = startSnoozeWakeLoop({
  storage,
  changes: createChangePublisher(redis, config.STREAM_REDIS_PREFIX, logger),
  logger,
  intervalMs: config.TRAY_WAKE_INTERVAL_MS,
});
started.wakeLoop = wakeLoop;

// Failed authentications per address, one count for the tray API, the admin listener and a
// worker-only process's /metrics (its METRICS_TOKEN is guessed like any other).
const failedAuth = createFailedAuthLimit({
  redis,
  points: config.AUTH_FAILURE_LIMIT,
  windowMs: config.AUTH_FAILURE_WINDOW_MS,
  keyPrefix: `${config.RATE_LIMIT_PREFIX}-auth`,
  exempt: config.AUTH_FAILURE_EXEMPT,
  logger,
});

/** The tray API with its live streams: token verifier, bans, per-user rate limit, messages. */
async function startApi(keys: NonNullable<typeof jwtConfig>) {
  // Each client sends the same token with every call: its verification is reused until its exp.
  const verifyToken = cacheVerifiedTokens(createTokenVerifier(userJwtKeys(keys, adminJwt), { logger }));
  const changes = createChangePublisher(redis, config.STREAM_REDIS_PREFIX, logger);
  // The events console's live tail: a subscriber connection of its own, made when a tail opens.
  const eventsFeed = createRedisEventsFeed({
    connect: () => {
      const connection = createRedis(config.redis);
      logRedisOutage(connection, logger, 'events tail');
      return connection;
    },
    prefix: config.STREAM_REDIS_PREFIX,
    logger,
  });
  // Admin API, moderation decisions, queue dashboard: on a listener of their own (ADMIN_PORT).
  const admin = adminDepsFromConfig(config, {
    events: storage.events,
    logger,
    redis,
    decisions: moderation.decisions,
    communityMembers: storage.communityMembers,
    removalOutcomes: storage.removalOutcomes,
    queues: moderation.queue ? [queue, moderation.queue] : [queue],
    verifyAdminJwt: adminJwt ? createAdminJwtVerifier(adminJwtKeys(adminJwt, keys), { logger }) : undefined,
    // Replays run the worker's own apply path, with what the worker tells (bans, live changes).
    apply: {
      storage,
      eventsRetentionDays: config.EVENTS_RETENTION_DAYS,
      trayRetentionDays: config.TRAY_RETENTION_DAYS,
      networkId: config.NETWORK_ID,
      publishBans: async (changed) => {
        // A Redis that lost the published set gets every stored ban, as the worker does.
        if ((await publishBans(redis, config.BAN_REDIS_PREFIX, changed)).setLost)
          await publishAllBans(redis, config.BAN_REDIS_PREFIX, await storage.bans.all());
      },
      platformWebhooks,
      onStored: moderation.step,
      onApplied: announce,
      onWritten: (records) => changes.recordsWritten(records),
      onRemoved: (records) => changes.recordsRemoved(records),
      onCleared: (userId, at) => changes.cleared(userId, at),
    },
    eventsFeed,
    blockedWords: words,
  });
  // Global bans: this instance's copy of the banned set, at most BAN_REFRESH_MS behind the worker.
  const bans = await startBanCache(redis, {
    prefix: config.BAN_REDIS_PREFIX,
    refreshMs: config.BAN_REFRESH_MS,
    logger,
    // Redis without a published set (lost, or not published yet) may hold later changes alone.
    stored: () => storage.bans.all(),
  });
  // Live streams: subscriptions need a connection of their own (subscriber mode runs nothing else).
  const subscriber = createRedis(config.redis);
  logRedisOutage(subscriber, logger, 'live streams');
  const live = createLiveTray({
    storage,
    redis,
    subscriber,
    prefix: config.STREAM_REDIS_PREFIX,
    streamsPerUser: config.STREAMS_PER_USER,
    streamsPerInstance: config.STREAMS_PER_INSTANCE,
    messages,
    bans,
    logger,
    registry,
  });
  const app = createTrayApi({
    logger,
    storage,
    redis,
    redisProbeKey,
    registry,
    metrics: metricsAccessFor(config.METRICS_TOKEN),
    verifyToken,
    bans,
    rateLimiter: createRateLimiter({
      redis,
      points: config.RATE_LIMIT_CALLS,
      windowMs: config.RATE_LIMIT_WINDOW_MS,
      keyPrefix: config.RATE_LIMIT_PREFIX,
      logger,
    }),
    failedAuth,
    trustProxy: config.TRUST_PROXY,
    messages,
    settings: {
      pageSize: config.TRAY_PAGE_SIZE,
      networkId: config.NETWORK_ID,
      blockApi: config.BLOCK_API === 'on',
      retentionDays: config.TRAY_RETENTION_DAYS,
      corsOrigins: config.TRAY_CORS_ORIGINS,
    },
    changes: live.publisher,
    mounts: [
      liveRoutes(live, { messages, verifyToken }),
      ...(config.TRAY_DEMO === 'on' ? [demoRoutes(messages)] : []),
    ],
  });
  return {
    app,
    adminApp: adminAuthConfigured(admin.auth) ? createAdminApp({ ...admin, failedAuth }) : undefined,
    // Streams never finish on their own: closed once the listeners stop accepting (the drain waits
    // for them), each told when to come back (to another instance behind the load balancer, or
    // this one restarted).
    closeStreams: async () => {
      await eventsFeed.close();
      await live.hub.close(1_000);
    },
    stop: () => bans.stop(),
  };
}

const api = runsApi && jwtConfig ? await startApi(jwtConfig) : undefined;
started.api = api;
// A worker-only process still answers operators: health, readiness and metrics.
const app =
  api?.app ??
  createOpsApp({
    registry,
    logger,
    metrics: metricsAccessFor(config.METRICS_TOKEN),
    failedAuth: { limit: failedAuth, trustProxy: config.TRUST_PROXY },
    checks: {
      storage: async () => (await storage.ping(), { ok: true, detail: { engine: storage.engine } }),
      redis: () => redisTakesWrites(redis, redisProbeKey),
    },
  });
const host = listenHostOf(config, config.TRAY_HOST);
const server = await listenedOrExit(
  logger,
  listen(app, {
    port: config.TRAY_PORT,
    host,
    portVariable: 'TRAY_PORT',
    logger,
    hostVariable: listenHostVariable(config, 'TRAY_HOST', config.TRAY_HOST),
  }),
  stop,
);
started.servers.push(server);
const metricsServer = await listenedOrExit(
  logger,
  listenMetrics(config.METRICS_PORT, { registry, logger }),
  stop,
);
if (metricsServer) started.servers.push(metricsServer);
// The admin API on its own listener (loopback unless ADMIN_HOST), never on the public port.
const adminServer = api?.adminApp
  ? await listenedOrExit(
      logger,
      listen(api.adminApp, {
        port: config.ADMIN_PORT,
        host: config.ADMIN_HOST,
        portVariable: 'ADMIN_PORT',
        logger,
        hostVariable: 'ADMIN_HOST',
      }),
      stop,
    )
  : undefined;
if (adminServer) started.servers.push(adminServer);
if (adminServer) {
  logger.info({ host: config.ADMIN_HOST, port: config.ADMIN_PORT }, 'admin API listening');
} else if (api) {
  logger.info('admin API off: set ADMIN_TOKEN (or ADMIN_JWT_AUDIENCE and ADMIN_JWT_ISSUER) to serve it');
}
logger.info({ host, port: config.TRAY_PORT, role: config.TRAY_ROLE }, 'tray service listening');
