import { loadOrExit } from '../shared/config/load-or-exit.ts';
import { loadReceiverConfig } from '../shared/config/receiver-config.ts';
import { closeServer, listen } from '../shared/http/listen.ts';
import { createMetricsRegistry } from '../shared/http/metrics-router.ts';
import { createLogger } from '../shared/logging/create-logger.ts';
import { onShutdown } from '../shared/process/on-shutdown.ts';
import { createRedis } from '../shared/redis/create-redis.ts';
import { createReceiverApp } from './create-receiver-app.ts';

const config = loadOrExit(() => loadReceiverConfig(process.env));
const logger = createLogger({ name: 'receiver', level: config.LOG_LEVEL });
const redis = createRedis(config.REDIS_URL);
redis.on('error', (error) => logger.warn({ err: error.message }, 'redis connection error'));
const registry = createMetricsRegistry('receiver');

const app = createReceiverApp({ logger, redis, registry });
const server = await listen(app, { port: config.RECEIVER_PORT });
logger.info({ port: config.RECEIVER_PORT }, 'receiver listening');

onShutdown(logger, async () => {
  await closeServer(server);
  redis.disconnect();
});
