import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { errorMiddleware, notFound } from '../shared/http/error-middleware.ts';
import { createHealthRouter } from '../shared/http/health-router.ts';
import { createMetricsRouter } from '../shared/http/metrics-router.ts';
import type { Logger } from '../shared/logging/create-logger.ts';
import { pingRedis } from '../shared/redis/create-redis.ts';

export interface ReceiverDeps {
  logger: Logger;
  redis: Redis;
  registry: Registry;
}

export function createReceiverApp(deps: ReceiverDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(helmet());
  app.use(createHealthRouter({ redis: async () => (await pingRedis(deps.redis), { ok: true }) }));
  app.use(createMetricsRouter(deps.registry));
  app.use(notFound);
  app.use(errorMiddleware(deps.logger));
  return app;
}
