import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Registry } from 'prom-client';
import { errorMiddleware, methodNotAllowed, notFound } from '../shared/http/error-middleware.ts';
import { createHealthRouter } from '../shared/http/health-router.ts';
import { helmetHeaders, helmetHeadersOnError } from '../shared/http/helmet-headers.ts';
import type { MetricsAccess } from '../shared/http/metrics-access.ts';
import { createMetricsRouter } from '../shared/http/metrics-router.ts';
import type { Logger } from '../shared/logging/create-logger.ts';
import type { EncodedWebhookJob } from '../shared/queue/webhook-queue.ts';
import { pingRedis, type RedisClient } from '../shared/redis/create-redis.ts';
import { createWebhookHandler, type WebhookSettings } from './http/create-webhook-handler.ts';
import { createReceiverMetrics } from './receiver-metrics.ts';
import type { Spool } from './spool/open-spool.ts';
import type { EnqueueOutcome } from './store/enqueue-once.ts';

export interface ReceiverDeps {
  logger: Logger;
  /** Checked by /readyz. */
  redis: RedisClient;
  registry: Registry;
  /** Who may read /metrics on this app (METRICS_TOKEN; off by default). */
  metrics: MetricsAccess;
  spool: Spool;
  /** Dedupe check + bull add (enqueueMany on the receiver's queue, batched per turn). */
  enqueue: (job: EncodedWebhookJob) => Promise<EnqueueOutcome>;
  webhookPath: string;
  settings: WebhookSettings;
}

export function createReceiverApp(deps: ReceiverDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  // An acknowledgement is never cached; hashing every body for an ETag is wasted work.
  app.disable('etag');
  const metrics = createReceiverMetrics(deps.registry, () => deps.spool.depth());
  // Before helmet's middleware: the webhook route sends the same headers, computed once by helmet.
  const securityHeaders = helmetHeaders();
  app.post(
    deps.webhookPath,
    createWebhookHandler({
      settings: deps.settings,
      enqueue: deps.enqueue,
      spool: deps.spool,
      metrics,
      logger: deps.logger,
      securityHeaders,
    }),
    helmetHeadersOnError(securityHeaders),
  );
  app.use(helmet());
  app.all(deps.webhookPath, methodNotAllowed(['POST']));
  app.use(
    createHealthRouter(
      {
        redis: async () => (await pingRedis(deps.redis), { ok: true }),
        spool: async () => {
          const detail = { depth: deps.spool.depth() };
          try {
            await deps.spool.checkWritable();
          } catch (error) {
            const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
            return { ok: false, error: `spool directory not writable (${code})`, detail };
          }
          return { ok: true, detail };
        },
      },
      { logger: deps.logger },
    ),
  );
  app.use(createMetricsRouter(deps.registry, deps.metrics));
  app.use(notFound);
  app.use(errorMiddleware(deps.logger));
  return app;
}
