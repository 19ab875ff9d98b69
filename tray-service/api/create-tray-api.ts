import express, { type Express } from 'express';
import type { Registry } from 'prom-client';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { errorMiddleware, methodNotAllowed, notFound } from '../../shared/http/error-middleware.ts';
import { createHealthRouter, PROBE_PATHS } from '../../shared/http/health-router.ts';
import type { MetricsAccess } from '../../shared/http/metrics-access.ts';
import { jsonInOneWrite } from '../../shared/http/json-in-one-write.ts';
import { pageSecurityHeaders } from '../../shared/http/security-headers.ts';
import { createMetricsRouter, METRICS_PATH } from '../../shared/http/metrics-router.ts';
import type { CorsOrigins } from '../../shared/config/cors-origins.ts';
import type { Logger } from '../../shared/logging/create-logger.ts';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import { redisTakesWrites } from '../../shared/redis/redis-takes-writes.ts';
import type { MessageRenderer } from '../messages/message-renderer.ts';
import type { TrayStorage } from '../storage/port.ts';
import { createBlockList } from '../use-cases/block-list.ts';
import type { BanView } from '../http/auth/ban-cache.ts';
import type { TokenVerifier } from '../http/auth/create-token-verifier.ts';
import { refuseBanned } from '../http/auth/refuse-banned.ts';
import { requireUser } from '../http/auth/require-user.ts';
import { privateNoStore } from '../http/private-no-store.ts';
import { blockPaths, createBlockRouter } from './block/create-block-router.ts';
import { deprecationHeaders } from './block/deprecation-headers.ts';
import { trustProxySetting } from '../../shared/http/trust-proxy-setting.ts';
import { mapDomainErrors } from '../http/map-domain-errors.ts';
import { mapStoreErrors } from '../http/map-store-errors.ts';
import { crossOrigin } from '../http/cross-origin.ts';
import { requestMetrics } from '../http/request-metrics.ts';
import { createTrayOpenApiDocument } from '../http/api-schema/tray-api-schema.ts';
import type { FailedAuthLimit } from '../../shared/http/failed-auth-limit.ts';
import { countFailedAuth, refuseBlockedAddress } from '../../shared/http/limit-failed-auth.ts';
import { isTokenGuess } from '../http/auth/is-token-guess.ts';
import { presentedBearerToken } from '../../shared/http/bearer-token.ts';
import { mapRedisErrors } from '../http/map-redis-errors.ts';
import { createAdmissionLedger } from '../http/rate-limit/admission-ledger.ts';
import { limitPerUser, limitPerUserAhead } from '../http/rate-limit/limit-per-user.ts';
import { createTrayRouter, trayPaths } from './tray/create-tray-router.ts';
import { createInboxRouter, inboxPaths } from './tray/create-inbox-router.ts';
import { createHistoryPages } from '../use-cases/history-page.ts';
import type { MountedRoutes } from '../http/mounted-routes.ts';
import type { TrayChanges } from '../use-cases/tray-changes.ts';
import { parseQueryString } from '../http/parse-query-string.ts';

export interface TrayApiSettings {
  /** TRAY_PAGE_SIZE: records per history page (docs/contract.md#limits: 10). */
  pageSize: number;
  /** NETWORK_ID: first half of a block entry's netid_uid. */
  networkId: string;
  /** BLOCK_API: false answers 410 Gone on every block path. */
  blockApi: boolean;
  /**
   * TRAY_RETENTION_DAYS: how long a record lives after its lastUpdate, and so how long an ended
   * mute span is kept (what it held back must stay held back while a record could count it).
   */
  retentionDays: number;
  /** TRAY_CORS_ORIGINS: web origins whose pages may call the API from a browser (http/cross-origin.ts). */
  corsOrigins?: CorsOrigins;
}

export interface TrayApiDeps {
  logger: Logger;
  /** The tray's storage (openStorage): records, read state, block list, stored events. */
  storage: TrayStorage;
  redis: RedisClient;
  /** The key /readyz writes (for a minute) to see that Redis takes writes (redisTakesWrites). */
  redisProbeKey: string;
  registry: Registry;
  /** Who may read /metrics on this app (METRICS_TOKEN; off by default). */
  metrics: MetricsAccess;
  verifyToken: TokenVerifier;
  /** Globally banned users (startBanCache): refused on every tray and block call. */
  bans: BanView;
  rateLimiter: RateLimiterAbstract;
  /** Failed authentications per source address (createFailedAuthLimit); without it, no such limit. */
  failedAuth?: FailedAuthLimit;
  /**
   * TRUST_PROXY: proxies whose X-Forwarded-For gives the caller's address, and whose
   * X-Forwarded-Proto says whether the browser came over https (Express `trust proxy`).
   */
  trustProxy?: readonly string[];
  messages: MessageRenderer;
  settings: TrayApiSettings;
  /** Epoch ms; tests pin it. */
  now?: () => number;
  /** Announces marks and clears to live streams (docs/live-tray.md); without it, nothing is announced. */
  changes?: Pick<TrayChanges, 'markedRead' | 'inboxMarked' | 'cleared' | 'lastRead'>;
  /** Other transports' routes on this listener, before the tray's: live streams, the demo page. */
  mounts?: readonly MountedRoutes[];
}

export function createTrayApi(deps: TrayApiDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  jsonInOneWrite(app);
  app.set('query parser', parseQueryString); // repeated keys become arrays, never nested objects
  // req.ip and req.secure: the socket's unless the connection comes from a listed proxy.
  app.set('trust proxy', trustProxySetting(deps.trustProxy));
  // Over plain http without upgrade-insecure-requests: the demo page's script and calls would go
  // to an https nobody serves. req.secure follows `trust proxy` above.
  app.use(pageSecurityHeaders({ ownStylesOnly: true }));
  const routes = new Set([
    ...[...trayPaths, ...inboxPaths].map((path) => `/notifications${path}`),
    ...blockPaths.map((path) => `/block${path}`),
    ...(deps.mounts ?? []).flatMap((mount) => mount.paths),
    '/openapi.json',
    // Served too: counted by their own paths, not as the unmatched traffic of scanners.
    ...PROBE_PATHS,
    METRICS_PATH,
  ]);
  app.use(requestMetrics(deps.registry, routes));
  // Before everything that may answer a page's call (a refused address's 429 included), so the page
  // can read why; the probes and /metrics are for operators, not pages.
  app.use(['/notifications', '/block', '/openapi.json'], crossOrigin(deps.settings.corsOrigins ?? []));
  app.use(
    createHealthRouter(
      {
        storage: async () => (
          await deps.storage.ping(),
          { ok: true, detail: { engine: deps.storage.engine } }
        ),
        redis: () => redisTakesWrites(deps.redis, deps.redisProbeKey),
      },
      // Redis down, the tray still serves history, counts and marks from storage (streams,
      // tickets and shared rate limits wait for it): ready, degraded.
      { logger: deps.logger, degradeOnly: ['redis'], registry: deps.registry },
    ),
  );
  // Set before the refusal below, so a refused tray or block call carries them too (docs/tray-api.md).
  app.use(['/notifications', '/block'], privateNoStore);
  app.use('/block', deprecationHeaders);
  // The probes above are never refused; every route below is, once an address has failed to
  // authenticate too often. /metrics too: its wrong METRICS_TOKENs count like any other failure,
  // so guessing it is limited like guessing a token (a local scraper uses METRICS_PORT, never refused).
  if (deps.failedAuth) app.use(refuseBlockedAddress(deps.failedAuth));
  app.use(createMetricsRouter(deps.registry, deps.metrics));
  // The admin paths are documented on the admin listener only (createAdminApp).
  const openApi = createTrayOpenApiDocument();
  app
    .route('/openapi.json')
    .get((_req, res) => {
      res.json(openApi);
    })
    .all(methodNotAllowed(['GET', 'HEAD']));

  // Every tray and block call: the caller comes from the bearer token only, is not banned, then
  // the per-user limit. The ledger is what this instance has heard of each caller's standing
  // under it, so that the reads of a caller well within it overlap the count of their call.
  const admissions = createAdmissionLedger({
    points: deps.rateLimiter.points,
    windowMs: deps.rateLimiter.duration * 1000,
  });
  const afterCaller = [refuseBanned(deps.bans), limitPerUser(deps.rateLimiter, admissions)];
  const guard = [requireUser(deps.verifyToken), ...afterCaller];
  const readGuard = [
    requireUser(deps.verifyToken),
    refuseBanned(deps.bans),
    limitPerUserAhead(deps.rateLimiter, admissions),
  ];
  const now = deps.now ?? Date.now;
  for (const mount of deps.mounts ?? []) app.use(mount.at, mount.router({ afterCaller, guard }, now));
  const pages = createHistoryPages(deps.storage, deps.settings.pageSize);
  const changes = deps.changes ? { changes: deps.changes } : {};
  app.use(
    '/notifications',
    createTrayRouter({
      storage: deps.storage,
      messages: deps.messages,
      pages,
      now,
      guard,
      readGuard,
      ...changes,
    }),
    createInboxRouter({
      storage: deps.storage,
      pages,
      now,
      guard,
      readGuard,
      retentionDays: deps.settings.retentionDays,
      ...changes,
    }),
  );
  app.use(
    '/block',
    createBlockRouter({
      blocks: createBlockList(deps.storage.blockList, deps.storage.deletedUsers, deps.settings.networkId),
      enabled: deps.settings.blockApi,
      guard,
    }),
  );
  app.use(notFound);
  // A guess is any bearer token sent: /metrics reads METRICS_TOKEN as any run of non-space
  // characters, so its guesses are read that way (a JWT's alphabet missed `guess!`); on the tray
  // and block calls such a token is refused as no JWT, and is a wrong credential all the same.
  if (deps.failedAuth)
    app.use(
      countFailedAuth(deps.failedAuth, deps.logger, {
        guessed: (req, error) =>
          isTokenGuess(req, error, (one) => presentedBearerToken(one.get('authorization'))),
      }),
    );
  app.use(mapDomainErrors);
  app.use(mapStoreErrors);
  // Stream tickets and places live in Redis.
  app.use(mapRedisErrors);
  app.use(errorMiddleware(deps.logger));
  return app;
}
