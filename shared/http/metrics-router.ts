import { Router } from 'express';
import { collectDefaultMetrics, Registry } from 'prom-client';

/** A registry per app (not prom-client's global one) so tests can build many apps in one process. */
export function createMetricsRegistry(service: string, withDefaults = true): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  if (withDefaults) collectDefaultMetrics({ register: registry });
  return registry;
}

export function createMetricsRouter(registry: Registry): Router {
  const router = Router();
  router.get('/metrics', async (_req, res) => {
    res.set('Content-Type', registry.contentType).send(await registry.metrics());
  });
  return router;
}
