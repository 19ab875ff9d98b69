import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Registry } from 'prom-client';
import type { Logger } from '../logging/create-logger.ts';
import { errorMiddleware, notFound } from './error-middleware.ts';
import { createHealthRouter, type ReadinessChecks } from './health-router.ts';
import type { MetricsAccess } from './metrics-access.ts';
import { createMetricsRouter } from './metrics-router.ts';

/**
 * What a process without a public API serves operators: `/healthz`, `/readyz` (the given checks)
 * and `/metrics` (as `metrics` allows); anything else is a JSON 404.
 */
export function createOpsApp(deps: {
  registry: Registry;
  checks: ReadinessChecks;
  logger: Logger;
  metrics: MetricsAccess;
}): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(helmet());
  app.use(createHealthRouter(deps.checks, { logger: deps.logger }));
  app.use(createMetricsRouter(deps.registry, deps.metrics));
  app.use(notFound);
  app.use(errorMiddleware(deps.logger));
  return app;
}
