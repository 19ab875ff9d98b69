import { SignJWT, type JWTPayload } from 'jose';
import type { Express } from 'express';
import { resolveJwtConfig } from '../../../../shared/config/tray-api-config.ts';
import { createMetricsRegistry } from '../../../../shared/http/metrics-router.ts';
import { createLogger } from '../../../../shared/logging/create-logger.ts';
import { createRedis, type RedisClient } from '../../../../shared/redis/create-redis.ts';
import { startBanCache, type BanCache } from '../../../../tray-service/http/auth/ban-cache.ts';
import { cacheVerifiedTokens } from '../../../../tray-service/http/auth/cache-verified-tokens.ts';
import { createTokenVerifier } from '../../../../tray-service/http/auth/create-token-verifier.ts';
import { createTrayApi, type TrayApiDeps } from '../../../../tray-service/api/create-tray-api.ts';
import { createRateLimiter } from '../../../../tray-service/http/rate-limit/create-rate-limiter.ts';
import { createMessageRenderer } from '../../../../tray-service/messages/create-message-renderer.ts';
import type { StorageEngine, TrayStorage } from '../../../../tray-service/storage/port.ts';
import { demoRoutes } from '../../../../tray-service/demo/demo-routes.ts';
import type { LiveTray } from '../../../../tray-service/live/create-live-tray.ts';
import { liveRoutes } from '../../../../tray-service/live/live-routes.ts';
import { uniqueName } from '../../../support/suite-resources.ts';
import { testStack } from '../../../support/test-stack.ts';
import { useTrayStorage } from '../../../support/use-tray-storage.ts';

/** The real renderer with the shipped catalogues, loaded once. */
const messages = createMessageRenderer({ defaultLocale: 'en' });

export const TEST_SECRET = 'test-secret-of-at-least-32-characters!!';

/** An HS256 token for `sub`, valid for an hour unless the claims say otherwise. */
export async function tokenFor(sub: string, claims: JWTPayload = {}, secret = TEST_SECRET): Promise<string> {
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(secret));
}

export const bearer = async (sub: string) => `Bearer ${await tokenFor(sub)}`;

/** A token for `sub` that expires `seconds` from now (a JWT's `exp` is whole seconds). */
export const expiringToken = (sub: string, seconds: number) =>
  new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setExpirationTime(Math.floor(Date.now() / 1000) + seconds)
    .sign(new TextEncoder().encode(TEST_SECRET));

export interface TrayApiHarness {
  /** The suite's own storage (the default adapter, or TEST_STORAGE's). */
  readonly storage: TrayStorage;
  readonly redis: RedisClient;
  /** The suite's own BAN_REDIS_PREFIX (the worker publishes there; the apps' ban cache reads it). */
  readonly banPrefix: string;
  /**
   * A new app over the suite's storage and Redis; options override the deps. `live` mounts its
   * streams (and `demo` the demo page beside them), as tray-service/main.ts does.
   */
  app(overrides?: Partial<TrayApiDeps> & { live?: LiveTray; demo?: boolean }): Express;
}

/**
 * Registers hooks giving the enclosing suite its own storage (of `engine`, else the tests' default
 * adapter), a Redis connection and a rate-limit key prefix, so suites never share state.
 */
export function useTrayApi(options: { rateLimit?: number; engine?: StorageEngine } = {}): TrayApiHarness {
  const suite = useTrayStorage(options.engine);
  const keyPrefix = uniqueName('rl');
  const banPrefix = uniqueName('bans');
  let redis: RedisClient | undefined;
  let bans: BanCache | undefined;
  before(async () => {
    redis = createRedis(testStack().redisUrl);
    bans = await startBanCache(redis, {
      prefix: banPrefix,
      refreshMs: 200,
      logger: createLogger({ name: 'test', level: 'silent' }),
    });
  });
  after(() => {
    bans?.stop();
    redis?.disconnect();
  });
  const theBans = () => {
    if (!bans) throw new Error('useTrayApi: used before the suite started');
    return bans;
  };
  const harness: TrayApiHarness = {
    get storage() {
      return suite.storage;
    },
    get redis() {
      if (!redis) throw new Error('useTrayApi: used before the suite started');
      return redis;
    },
    banPrefix,
    app({ live, demo, ...overrides } = {}) {
      // As main.ts wires it: a verification is reused until the token's exp.
      const verifyToken =
        overrides.verifyToken ??
        cacheVerifiedTokens(createTokenVerifier(resolveJwtConfig({ JWT_SECRET: TEST_SECRET })));
      const liveDeps = live
        ? {
            changes: live.publisher,
            mounts: [liveRoutes(live, { messages, verifyToken }), ...(demo ? [demoRoutes(messages)] : [])],
          }
        : {};
      return createTrayApi({
        logger: createLogger({ name: 'test', level: 'silent' }),
        storage: suite.storage,
        redis: harness.redis,
        redisProbeKey: `${keyPrefix}:write-probe`,
        registry: createMetricsRegistry('tray-service', false),
        metrics: { kind: 'open' },
        verifyToken,
        bans: theBans(),
        rateLimiter: createRateLimiter({
          redis: harness.redis,
          points: options.rateLimit ?? 10_000,
          windowMs: 60_000,
          keyPrefix,
        }),
        messages,
        settings: { pageSize: 10, networkId: 'net1', blockApi: true, retentionDays: 90 },
        ...liveDeps,
        ...overrides,
      });
    },
  };
  return harness;
}
