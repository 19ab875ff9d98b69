import { Router } from 'express';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { methodNotAllowed } from './error-middleware.ts';
import { requireMetricsToken, type MetricsAccess } from './metrics-access.ts';

/** Where createMetricsRouter serves the metrics. */
export const METRICS_PATH = '/metrics';

/** A registry per app (not prom-client's global one) so tests can build many apps in one process. */
export function createMetricsRegistry(service: string, withDefaults = true): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  if (withDefaults) collectDefaultMetrics({ register: registry });
  return registry;
}

/** `/metrics` as `access` allows: absent (`off`), behind METRICS_TOKEN, or open (loopback port). */
export function createMetricsRouter(registry: Registry, access: MetricsAccess): Router {
  const router = Router();
  if (access.kind === 'off') return router;
  const guard = access.kind === 'token' ? [requireMetricsToken(access.token)] : [];
  router
    .route(METRICS_PATH)
    .get(...guard, async (_req, res) => {
      res.set('Content-Type', registry.contentType).send(await registry.metrics());
    })
    .all(methodNotAllowed(['GET', 'HEAD']));
  return router;
}
