import type { Server } from 'node:http';
import express from 'express';
import helmet from 'helmet';
import type { Registry } from 'prom-client';
import type { Logger } from '../logging/create-logger.ts';
import { errorMiddleware, notFound } from './error-middleware.ts';
import { listen } from './listen.ts';
import { createMetricsRouter } from './metrics-router.ts';

/**
 * The METRICS_PORT listener: `/metrics` only, open, bound to 127.0.0.1 so only this host (a local
 * scraper, or a sidecar sharing the network namespace) reaches it. Undefined without a port.
 */
export async function listenMetrics(
  port: number | undefined,
  deps: { registry: Registry; logger: Logger },
): Promise<Server | undefined> {
  if (port === undefined) return undefined;
  const app = express();
  app.disable('x-powered-by');
  app.use(helmet());
  app.use(createMetricsRouter(deps.registry, { kind: 'open' }));
  app.use(notFound);
  app.use(errorMiddleware(deps.logger));
  const server = await listen(app, {
    port,
    host: '127.0.0.1',
    portVariable: 'METRICS_PORT',
    logger: deps.logger,
  });
  deps.logger.info({ port, host: '127.0.0.1' }, 'metrics listening');
  return server;
}
