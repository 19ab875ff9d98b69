import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Redis } from 'ioredis';
import type { Db } from 'mongodb';
import type { Registry } from 'prom-client';
import { errorMiddleware, notFound } from '../../shared/http/error-middleware.ts';
import { createHealthRouter } from '../../shared/http/health-router.ts';
import { createMetricsRouter } from '../../shared/http/metrics-router.ts';
import type { Logger } from '../../shared/logging/create-logger.ts';
import { pingMongo } from '../../shared/mongo/connect-mongo.ts';
import { pingRedis } from '../../shared/redis/create-redis.ts';
import { createAdminRouter, type AdminRouterDeps } from '../admin/create-admin-router.ts';

export interface TrayApiDeps {
  logger: Logger;
  db: Db;
  redis: Redis;
  registry: Registry;
  /** Admin API, moderation decisions and queue dashboard under /admin (issue 7). */
  admin?: AdminRouterDeps;
}

export function createTrayApi(deps: TrayApiDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(helmet());
  app.use(
    createHealthRouter({
      mongodb: async () => (await pingMongo(deps.db), { ok: true }),
      redis: async () => (await pingRedis(deps.redis), { ok: true }),
    }),
  );
  app.use(createMetricsRouter(deps.registry));
  if (deps.admin) app.use('/admin', createAdminRouter(deps.admin));
  app.use(notFound);
  app.use(errorMiddleware(deps.logger));
  return app;
}
