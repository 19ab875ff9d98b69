import { loadOrExit } from '../shared/config/load-or-exit.ts';
import { loadReceiverConfig } from './receiver-config.ts';
import { listenHostOf, listenHostVariable } from '../shared/config/listen-config.ts';
import { closeServer, drainGraceMs, listen, listenedOrExit, warnCut } from '../shared/http/listen.ts';
import { listenMetrics } from '../shared/http/listen-metrics.ts';
import { metricsAccessFor } from '../shared/http/metrics-access.ts';
import { createMetricsRegistry } from '../shared/http/metrics-router.ts';
import { createLogger } from '../shared/logging/create-logger.ts';
import { exitOnUncaught } from '../shared/process/exit-on-uncaught.ts';
import { onShutdown } from '../shared/process/on-shutdown.ts';
import { refuseEvictingRedis } from '../shared/redis/refuse-evicting-redis.ts';
import { refuseMissingDatabase } from '../shared/redis/refuse-missing-database.ts';
import { warnVolatileRedis } from './store/warn-volatile-redis.ts';
import { createAllowlist } from './allowlist/create-allowlist.ts';
import { describeWebhooks } from './signature/describe-webhooks.ts';
import { MIN_SECRET_BYTES, shortSecretWebhooks } from './signature/short-secrets.ts';
import { standardFormSecretWebhooks } from './signature/standard-form-secrets.ts';
import { SpoolDirError } from './spool/spool-dir-error.ts';
import { wireReceiver } from './wire-receiver.ts';

const config = loadOrExit(() => loadReceiverConfig(process.env));
const logger = createLogger({ name: 'receiver', level: config.LOG_LEVEL });
exitOnUncaught(logger);
if (config.WEBHOOK_ALLOWLIST === 'off') {
  logger.warn('WEBHOOK_ALLOWLIST=off: webhooks are accepted from any address (local development only)');
}

// Which header and scheme each webhook's signature is checked with: never its secret.
logger.info(
  { webhooks: describeWebhooks(config.WEBHOOK_SECRETS, config.WEBHOOK_TOLERANCE_SECONDS) },
  'webhook signatures',
);
const short = shortSecretWebhooks(config.WEBHOOK_SECRETS);
if (short.length > 0) {
  logger.warn(
    { webhooks: short, minBytes: MIN_SECRET_BYTES },
    `webhook secrets shorter than ${MIN_SECRET_BYTES} bytes: whoever guesses one can forge deliveries`,
  );
}

const standardForm = standardFormSecretWebhooks(config.WEBHOOK_SECRETS);
if (standardForm.length > 0) {
  logger.warn(
    { webhooks: standardForm },
    'webhook secrets in the Standard Webhooks form (whsec_) on webhooks of the platform scheme: a Standard Webhooks sender is refused until WEBHOOK_SIGNATURE_SCHEME names them standard-webhooks',
  );
}

const registry = createMetricsRegistry('receiver');
const receiver = await spoolOpenedOrExit(
  wireReceiver({
    redis: config.redis,
    queuePrefix: config.QUEUE_PREFIX,
    spoolDir: config.SPOOL_DIR,
    webhookPath: config.WEBHOOK_PATH,
    dedupeSeconds: config.WEBHOOK_DEDUPE_SECONDS,
    enqueueTimeoutMs: config.WEBHOOK_ENQUEUE_TIMEOUT_MS,
    settings: {
      allowlist:
        config.WEBHOOK_ALLOWLIST === 'on'
          ? createAllowlist(config.WEBHOOK_REGIONS, config.WEBHOOK_ALLOW_CIDRS)
          : undefined,
      trustProxy: config.TRUST_PROXY,
      secrets: config.WEBHOOK_SECRETS,
      timestampToleranceSeconds: config.WEBHOOK_TOLERANCE_SECONDS,
      maxBodyBytes: config.WEBHOOK_MAX_BODY_BYTES,
    },
    logger,
    registry,
    metrics: metricsAccessFor(config.METRICS_TOKEN),
    // A Redis that may evict keys would silently lose queued events, and one that refused the
    // database REDIS_URL names would mix them with another deployment's: refused, also after a
    // reconnect, and the spool drains into it only once it passed.
    beforeDraining: async (client) => {
      await Promise.all([refuseEvictingRedis(client, { logger }), refuseMissingDatabase(client, { logger })]);
    },
  }),
);
const metricsServer = await listenedOrExit(logger, listenMetrics(config.METRICS_PORT, { registry, logger }));

// The eviction check (above) before listening; a Redis that may answer before its write is on disk
// could lose acknowledged events: a warning.
await Promise.all([receiver.checked, warnVolatileRedis(receiver.queue.client, { logger })]);

// Slowloris: headers within 5 s, the whole request (at most WEBHOOK_MAX_BODY_BYTES) within 15 s.
const host = listenHostOf(config, config.RECEIVER_HOST);
const server = await listenedOrExit(
  logger,
  listen(receiver.app, {
    port: config.RECEIVER_PORT,
    host,
    headersTimeoutMs: 5_000,
    requestTimeoutMs: 15_000,
    keepAliveTimeoutMs: config.RECEIVER_KEEPALIVE_TIMEOUT_MS,
    // A sender refused on its address (or a request refused on its method or path) is answered
    // before it is invited to upload its body.
    deferContinue: true,
    portVariable: 'RECEIVER_PORT',
    logger,
    hostVariable: listenHostVariable(config, 'RECEIVER_HOST', config.RECEIVER_HOST),
  }),
);
logger.info(
  {
    host,
    port: config.RECEIVER_PORT,
    path: config.WEBHOOK_PATH,
    webhooks: config.WEBHOOK_SECRETS.map((secret) => secret.name),
    regions: config.WEBHOOK_ALLOWLIST === 'on' ? config.WEBHOOK_REGIONS : 'off',
    spoolDir: config.SPOOL_DIR,
  },
  'receiver listening',
);

onShutdown(
  logger,
  async () => {
    const began = performance.now();
    // Stop accepting and finish in-flight requests first: each may still append to the spool. Both
    // listeners drain at once, so their grace is spent once, well inside the shutdown deadline.
    const cut = warnCut(logger);
    const graceMs = drainGraceMs(config.SHUTDOWN_DEADLINE_MS);
    await Promise.all([
      closeServer(server, graceMs, cut),
      metricsServer && closeServer(metricsServer, graceMs, cut),
    ]);
    // What is left of the deadline (less the closes after it) queues what the spool holds, if
    // Redis takes it: a receiver replaced rather than restarted leaves its spool to no one.
    await receiver.close(config.SHUTDOWN_DEADLINE_MS - (performance.now() - began) - CLOSE_RESERVE_MS);
  },
  config.SHUTDOWN_DEADLINE_MS,
);

/** What the shutdown keeps of its deadline for closing the spool and Redis after the last drain. */
const CLOSE_RESERVE_MS = 1_500;

/** A SPOOL_DIR that cannot be used ends start-up with one fatal line naming it (exit 1). */
async function spoolOpenedOrExit<T>(opening: Promise<T>): Promise<T> {
  try {
    return await opening;
  } catch (error) {
    if (!(error instanceof SpoolDirError)) throw error;
    logger.fatal({ spoolDir: error.dir, code: error.reason }, error.message);
    process.exit(1);
  }
}
