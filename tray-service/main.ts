import { loadOrExit } from '../shared/config/load-or-exit.ts';
import { loadTrayConfig } from '../shared/config/tray-config.ts';
import { closeServer, listen } from '../shared/http/listen.ts';
import { createMetricsRegistry } from '../shared/http/metrics-router.ts';
import { createLogger } from '../shared/logging/create-logger.ts';
import { connectMongo } from '../shared/mongo/connect-mongo.ts';
import { onShutdown } from '../shared/process/on-shutdown.ts';
import { createWebhookQueue } from '../shared/queue/webhook-queue.ts';
import { createRedis } from '../shared/redis/create-redis.ts';
import { adminDepsFromConfig } from './admin/admin-deps-from-config.ts';
import { createTrayApi } from './api/create-tray-api.ts';
import { createMessageRenderer } from './messages/create-message-renderer.ts';
import { loadBlockedWords } from './moderation/load-blocked-words.ts';
import { setupModeration } from './moderation/setup-moderation.ts';
import { createEventsQueries } from './store/events-queries.ts';
import { startWorker } from './worker/start-worker.ts';

const config = loadOrExit(() => loadTrayConfig(process.env));
// Blocklisted words are read at start-up, so a missing MODERATION_WORDS_FILE stops it at once.
const words = loadOrExit(() =>
  loadBlockedWords({
    words: config.MODERATION_WORDS,
    file: config.MODERATION_WORDS_FILE,
    mode: config.MODERATION_MATCH,
  }),
);
const logger = createLogger({ name: 'tray-service', level: config.LOG_LEVEL });
// Catalogues are checked and compiled before anything connects: a broken one stops start-up (issue 6).
const messages = loadOrExit(() =>
  createMessageRenderer({ defaultLocale: config.DEFAULT_LOCALE, overrideDir: config.TRAY_MESSAGES_DIR }),
);
logger.info({ locales: messages.locales, defaultLocale: messages.defaultLocale }, 'tray messages loaded');
const registry = createMetricsRegistry('tray-service');
const { client, db } = await connectMongo(config.MONGODB_URI, config.MONGODB_DB, { appName: 'tray-service' });
const redis = createRedis(config.REDIS_URL);
redis.on('error', (error) => logger.warn({ err: error.message }, 'redis connection error'));
const queue = createWebhookQueue({ redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX });

// Admin API, moderation, queue dashboard (issue 7).
const moderation = await setupModeration(config, { db, logger, words });
await createEventsQueries(db).ensureIndexes();
const adminQueues = moderation.queue ? [queue, moderation.queue] : [queue];
const admin = adminDepsFromConfig(config, {
  db,
  logger,
  decisions: moderation.decisions,
  queues: adminQueues,
});

const worker = await startWorker({ queue, db, logger, registry });
const server = await listen(createTrayApi({ logger, db, redis, registry, admin }), {
  port: config.TRAY_PORT,
});
logger.info({ port: config.TRAY_PORT }, 'tray service listening');

onShutdown(logger, async () => {
  await closeServer(server);
  await worker.close();
  await moderation.close();
  await queue.close();
  redis.disconnect();
  await client.close();
});
