import express from 'express';
import type { RequestListener } from 'node:http';
import type { Registry } from 'prom-client';
import { errorMiddleware, methodNotAllowed, notFound } from '../shared/http/error-middleware.ts';
import { createHealthRouter, type CheckResult } from '../shared/http/health-router.ts';
import { helmetHeaders } from '../shared/http/helmet-headers.ts';
import { securityHeaders } from '../shared/http/security-headers.ts';
import { countFailedAuth, refuseBlockedAddress } from '../shared/http/limit-failed-auth.ts';
import { guessedMetricsToken, type MetricsAccess } from '../shared/http/metrics-access.ts';
import { createMetricsRouter } from '../shared/http/metrics-router.ts';
import type { Logger } from '../shared/logging/create-logger.ts';
import type { EncodedWebhookJob } from '../shared/queue/webhook-queue.ts';
import { createWebhookHandler, type WebhookSettings } from './http/create-webhook-handler.ts';
import { createMetricsGuessLimit, metricsCallerAddress } from './http/metrics-guess-limit.ts';
import { webhookPathMatcher } from './http/webhook-path-matcher.ts';
import type { ReceiverMetrics } from './receiver-metrics.ts';
import type { Spool } from './spool/open-spool.ts';
import type { EnqueueOutcome } from './store/enqueue-once.ts';

export interface ReceiverDeps {
  logger: Logger;
  /** /readyz's Redis check: it answers and takes writes (createRedisWriteHealth). */
  redis: () => Promise<CheckResult>;
  /** Served on /metrics; holds `receiverMetrics`. */
  registry: Registry;
  /** Who may read /metrics on this app (METRICS_TOKEN; off by default). */
  metrics: MetricsAccess;
  /** The receiver's metrics (createReceiverMetrics on `registry`), shared with the spool drainer. */
  receiverMetrics: ReceiverMetrics;
  spool: Spool;
  /** Dedupe check + bull add (enqueueMany on the receiver's queue, batched per turn). */
  enqueue: (job: EncodedWebhookJob) => Promise<EnqueueOutcome>;
  webhookPath: string;
  settings: WebhookSettings;
  /** The longest one enqueue can take by its own bounds (createWebhookHandler). */
  enqueueBoundMs?: number;
}

/**
 * The receiver's HTTP app: a request listener for `http.createServer` (or supertest). `POST` on the
 * webhook path goes straight to the webhook handler; everything else goes through Express.
 */
export function createReceiverApp(deps: ReceiverDeps): RequestListener {
  const app = express();
  app.disable('x-powered-by');
  // An acknowledgement is never cached; hashing every body for an ETag is wasted work.
  app.disable('etag');
  const metrics = deps.receiverMetrics;
  // helmet's headers, computed once: the webhook handler answers outside Express and sends them
  // itself; every other route gets them from the same map.
  const headers = helmetHeaders();
  const webhook = createWebhookHandler({
    settings: deps.settings,
    enqueue: deps.enqueue,
    spool: deps.spool,
    metrics,
    logger: deps.logger,
    securityHeaders: headers,
    ...(deps.enqueueBoundMs === undefined ? {} : { enqueueBoundMs: deps.enqueueBoundMs }),
  });
  // The other spellings of the path (a trailing slash, another case, a query string), matched by
  // the one matcher the own-server example uses too: the same handler, which answers every outcome
  // itself. Any other method there is a 405 naming POST.
  const isWebhookPath = webhookPathMatcher(deps.webhookPath);
  const notPost = methodNotAllowed(['POST']);
  app.use((req, res, next) => {
    if (req.method === 'POST' && isWebhookPath(req.url)) void webhook(req, res);
    else next();
  });
  app.use(securityHeaders(headers));
  app.use((req, res, next) => (isWebhookPath(req.url) ? notPost(req, res, next) : next()));
  app.use(
    createHealthRouter(
      {
        redis: deps.redis,
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
      // Redis down, the spool takes the deliveries: ready, degraded, until the spool cannot.
      { logger: deps.logger, degradeOnly: ['redis'], registry: deps.registry },
    ),
  );
  // Guessing METRICS_TOKEN is limited per address, as on the tray's port; only /metrics is counted
  // and refused, so an address over the limit still delivers webhooks and answers probes.
  const guesses = deps.metrics.kind === 'token' ? createMetricsGuessLimit() : undefined;
  const callerAddress = metricsCallerAddress(deps.settings.trustProxy);
  if (guesses) app.use('/metrics', refuseBlockedAddress(guesses, callerAddress));
  app.use(createMetricsRouter(deps.registry, deps.metrics));
  app.use(notFound);
  if (guesses)
    app.use(
      '/metrics',
      countFailedAuth(guesses, deps.logger, { addressOf: callerAddress, guessed: guessedMetricsToken }),
    );
  app.use(errorMiddleware(deps.logger));

  // Nearly every request a receiver gets is a POST on the webhook path, written exactly so. It
  // skips Express: its router, the prototype swap of the request and response and the final
  // handler made per request cost about a tenth of the receiver's CPU and gave nothing that path
  // uses (docs/decisions.md; BENCHMARKS.md, "Receiver").
  const { webhookPath } = deps;
  return (req, res) => {
    if (req.method === 'POST' && req.url === webhookPath) void webhook(req, res);
    else app(req, res);
  };
}
