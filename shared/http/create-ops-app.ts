import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Registry } from 'prom-client';
import type { Logger } from '../logging/create-logger.ts';
import { errorMiddleware, notFound } from './error-middleware.ts';
import type { FailedAuthLimit } from './failed-auth-limit.ts';
import { countFailedAuth, refuseBlockedAddress } from './limit-failed-auth.ts';
import { createHealthRouter, type ReadinessChecks } from './health-router.ts';
import { guessedMetricsToken, type MetricsAccess } from './metrics-access.ts';
import { createMetricsRouter } from './metrics-router.ts';
import { trustProxySetting } from './trust-proxy-setting.ts';

/**
 * What a process without a public API serves operators: `/healthz`, `/readyz` (the given checks)
 * and `/metrics` (as `metrics` allows); anything else is a JSON 404. With `failedAuth`, wrong
 * METRICS_TOKENs (not scrapes without one) count against the caller's address as on the API's
 * port, and an address over the limit is refused (429) everywhere but the probes, so guessing the
 * token is limited here too.
 */
export function createOpsApp(deps: {
  registry: Registry;
  checks: ReadinessChecks;
  logger: Logger;
  metrics: MetricsAccess;
  failedAuth?: { limit: FailedAuthLimit; trustProxy: readonly string[] };
}): Express {
  const app = express();
  app.disable('x-powered-by');
  const { failedAuth } = deps;
  // Whose address a failure counts against, as the API reads it (TRUST_PROXY).
  app.set('trust proxy', trustProxySetting(failedAuth?.trustProxy));
  app.use(helmet());
  app.use(createHealthRouter(deps.checks, { logger: deps.logger, registry: deps.registry }));
  if (failedAuth) app.use(refuseBlockedAddress(failedAuth.limit));
  app.use(createMetricsRouter(deps.registry, deps.metrics));
  app.use(notFound);
  if (failedAuth) app.use(countFailedAuth(failedAuth.limit, deps.logger, { guessed: guessedMetricsToken }));
  app.use(errorMiddleware(deps.logger));
  return app;
}
