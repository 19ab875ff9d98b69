import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolveJwtConfig } from '../../../../shared/config/tray-api-config.ts';
import { closeServer, listen } from '../../../../shared/http/listen.ts';
import { createMetricsRegistry } from '../../../../shared/http/metrics-router.ts';
import { createLogger } from '../../../../shared/logging/create-logger.ts';
import type { RedisClient } from '../../../../shared/redis/create-redis.ts';
import type { BanCache } from '../../../../tray-service/http/auth/ban-cache.ts';
import { createTokenVerifier } from '../../../../tray-service/http/auth/create-token-verifier.ts';
import { createTrayApi } from '../../../../tray-service/api/create-tray-api.ts';
import { createRateLimiter } from '../../../../tray-service/http/rate-limit/create-rate-limiter.ts';
import { createLiveTray, type LiveTray } from '../../../../tray-service/live/create-live-tray.ts';
import { liveRoutes } from '../../../../tray-service/live/live-routes.ts';
import { createMessageRenderer } from '../../../../tray-service/messages/create-message-renderer.ts';
import { TEST_SECRET } from '../../api/support/api-harness.ts';
import type { TrayStorage } from '../../../../tray-service/storage/port.ts';

const silent = createLogger({ name: 'test', level: 'silent' });

export interface StartedLiveInstance {
  readonly live: LiveTray;
  readonly server: Server;
  readonly base: string;
  /** Closes the streams, then the server. */
  close(): Promise<void>;
}

/** The hub's timings and bounds a test may shorten. */
export interface LiveTimings {
  heartbeatMs: number;
  quietMs: number;
  subscriberPingTimeoutMs?: number;
  catchUpMs?: number;
  maxWaitingChanges?: number;
}

/**
 * One tray API with its live tray on a Redis of the test's own (a server it stops, a cluster),
 * listening on 127.0.0.1: what tests of the stream against a particular Redis start.
 */
export async function startLiveInstance(options: {
  storage: TrayStorage;
  redis: RedisClient;
  subscriber: RedisClient;
  bans: BanCache;
  streamsPerUser: number;
  /** The hub's timings, where a test shortens them. */
  timings?: LiveTimings;
}): Promise<StartedLiveInstance> {
  const { storage, redis, bans } = options;
  const registry = createMetricsRegistry('tray-service', false);
  const messages = createMessageRenderer({ defaultLocale: 'en' });
  const live = createLiveTray({
    storage,
    redis,
    subscriber: options.subscriber,
    prefix: 'live',
    streamsPerUser: options.streamsPerUser,
    messages,
    bans,
    logger: silent,
    registry,
    ...options.timings,
  });
  const verifyToken = createTokenVerifier(resolveJwtConfig({ JWT_SECRET: TEST_SECRET }));
  const app = createTrayApi({
    logger: silent,
    storage,
    redis,
    redisProbeKey: 'live-write-probe',
    registry,
    metrics: { kind: 'open' },
    verifyToken,
    bans,
    rateLimiter: createRateLimiter({ redis, points: 1_000, windowMs: 60_000, keyPrefix: 'rl' }),
    messages,
    settings: { pageSize: 10, networkId: 'net1', blockApi: true, retentionDays: 90 },
    changes: live.publisher,
    mounts: [liveRoutes(live, { messages, verifyToken })],
  });
  const server = await listen(app, { port: 0, host: '127.0.0.1' });
  return {
    live,
    server,
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      await live.hub.close(1_000);
      await closeServer(server, 1_000);
    },
  };
}
