import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Registry } from 'prom-client';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { errorMiddleware, notFound } from '../../shared/http/error-middleware.ts';
import { createHealthRouter } from '../../shared/http/health-router.ts';
import type { MetricsAccess } from '../../shared/http/metrics-access.ts';
import { createMetricsRouter } from '../../shared/http/metrics-router.ts';
import type { Logger } from '../../shared/logging/create-logger.ts';
import { pingRedis, type RedisClient } from '../../shared/redis/create-redis.ts';
import type { MessageRenderer } from '../messages/message-renderer.ts';
import type { TrayStorage } from '../storage/port.ts';
import { createBlockList } from '../use-cases/block-list.ts';
import type { BanView } from './auth/ban-cache.ts';
import type { TokenVerifier } from './auth/create-token-verifier.ts';
import { refuseBanned } from './auth/refuse-banned.ts';
import { requireUser } from './auth/require-user.ts';
import { blockPaths, createBlockRouter } from './block/create-block-router.ts';
import { mapStoreErrors } from './http/map-store-errors.ts';
import { requestMetrics } from './http/request-metrics.ts';
import { createOpenApiDocument } from './openapi.ts';
import type { FailedAuthLimit } from './rate-limit/failed-auth-limit.ts';
import { countFailedAuth, refuseBlockedAddress } from './rate-limit/limit-failed-auth.ts';
import { limitPerUser } from './rate-limit/limit-per-user.ts';
import { createTrayRouter, trayPaths } from './tray/create-tray-router.ts';
import { createDemoRouter, demoPaths } from '../demo/create-demo-router.ts';
import { createStreamRouter, streamPaths } from '../live/create-stream-router.ts';
import type { LiveTray } from '../live/create-live-tray.ts';

export interface TrayApiSettings {
  /** TRAY_PAGE_SIZE: records per history page (docs/contract.md#limits: 10). */
  pageSize: number;
  /** NETWORK_ID: first half of a block entry's netid_uid. */
  networkId: string;
  /** BLOCK_API: false answers 410 Gone on every block path. */
  blockApi: boolean;
  /** TRAY_DEMO: the demo page at /demo (needs `live`). */
  demo?: boolean;
}

export interface TrayApiDeps {
  logger: Logger;
  /** The tray's storage (openStorage): records, read state, block list, stored events. */
  storage: TrayStorage;
  redis: RedisClient;
  registry: Registry;
  /** Who may read /metrics on this app (METRICS_TOKEN; off by default). */
  metrics: MetricsAccess;
  verifyToken: TokenVerifier;
  /** Globally banned users (startBanCache): refused on every tray and block call. */
  bans: BanView;
  rateLimiter: RateLimiterAbstract;
  /** Failed authentications per source address (createFailedAuthLimit); without it, no such limit. */
  failedAuth?: FailedAuthLimit;
  /** TRUST_PROXY: proxies whose X-Forwarded-For gives the caller's address (Express `trust proxy`). */
  trustProxy?: readonly string[];
  messages: MessageRenderer;
  settings: TrayApiSettings;
  /** Epoch ms; tests pin it. */
  now?: () => number;
  /** Live streams (docs/live-tray.md): without it there is no stream endpoint and nothing is announced. */
  live?: LiveTray;
}

export function createTrayApi(deps: TrayApiDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple'); // repeated keys become arrays, never nested objects
  // req.ip: the socket's address unless the connection comes from a listed proxy.
  app.set('trust proxy', deps.trustProxy && deps.trustProxy.length > 0 ? [...deps.trustProxy] : false);
  app.use(helmet());
  const routes = new Set([
    ...trayPaths.map((path) => `/notifications${path}`),
    ...blockPaths.map((path) => `/block${path}`),
    ...(deps.live ? streamPaths.map((path) => `/notifications${path}`) : []),
    ...(deps.live && deps.settings.demo ? demoPaths : []),
    '/openapi.json',
  ]);
  app.use(requestMetrics(deps.registry, routes));
  app.use(
    createHealthRouter(
      {
        storage: async () => (
          await deps.storage.ping(),
          { ok: true, detail: { engine: deps.storage.engine } }
        ),
        redis: async () => (await pingRedis(deps.redis), { ok: true }),
      },
      { logger: deps.logger },
    ),
  );
  app.use(createMetricsRouter(deps.registry, deps.metrics));
  // Probes and scrapers above are never refused; every route below is, once an address has
  // failed to authenticate too often.
  if (deps.failedAuth) app.use(refuseBlockedAddress(deps.failedAuth));
  // The admin paths are documented on the admin listener only (createAdminApp).
  const openApi = createOpenApiDocument();
  app.get('/openapi.json', (_req, res) => {
    res.json(openApi);
  });

  // Every tray and block call: the caller comes from the bearer token only, is not banned, then
  // the per-user limit.
  const afterCaller = [refuseBanned(deps.bans), limitPerUser(deps.rateLimiter)];
  const guard = [requireUser(deps.verifyToken), ...afterCaller];
  const now = deps.now ?? Date.now;
  const { live } = deps;
  if (live) {
    app.use(
      '/notifications',
      createStreamRouter({
        hub: live.hub,
        slots: live.slots,
        tickets: live.tickets,
        messages: deps.messages,
        verifyToken: deps.verifyToken,
        afterCaller,
        guard,
        now,
      }),
    );
    if (deps.settings.demo) app.use(createDemoRouter({ messages: deps.messages }));
  }
  app.use(
    '/notifications',
    createTrayRouter({
      storage: deps.storage,
      messages: deps.messages,
      pageSize: deps.settings.pageSize,
      now,
      guard,
      ...(live ? { changes: live.publisher } : {}),
    }),
  );
  app.use(
    '/block',
    createBlockRouter({
      blocks: createBlockList(deps.storage.blockList, deps.settings.networkId),
      enabled: deps.settings.blockApi,
      guard,
    }),
  );
  app.use(notFound);
  if (deps.failedAuth) app.use(countFailedAuth(deps.failedAuth, deps.logger));
  app.use(mapStoreErrors);
  app.use(errorMiddleware(deps.logger));
  return app;
}
