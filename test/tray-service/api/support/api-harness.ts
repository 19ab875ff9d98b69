import { SignJWT, type JWTPayload } from 'jose';
import type { Db } from 'mongodb';
import type { Express } from 'express';
import { resolveJwtConfig } from '../../../../shared/config/tray-api-config.ts';
import { createMetricsRegistry } from '../../../../shared/http/metrics-router.ts';
import { createLogger } from '../../../../shared/logging/create-logger.ts';
import { createRedis, type RedisClient } from '../../../../shared/redis/create-redis.ts';
import { createCounter, type Counter } from '../../../../tray-service/storage/mongodb/create-counter.ts';
import type { Storage } from '../../../../tray-service/storage/mongodb/detect-storage.ts';
import { startBanCache, type BanCache } from '../../../../tray-service/api/auth/ban-cache.ts';
import { createTokenVerifier } from '../../../../tray-service/api/auth/create-token-verifier.ts';
import { createTrayApi, type TrayApiDeps } from '../../../../tray-service/api/create-tray-api.ts';
import { createRateLimiter } from '../../../../tray-service/api/rate-limit/create-rate-limiter.ts';
import { createMessageRenderer } from '../../../../tray-service/messages/create-message-renderer.ts';
import { apiCollections } from '../../../../tray-service/storage/mongodb/tray-collections.ts';
import { ensureTestCollections } from '../../../support/ensure-test-collections.ts';
import { uniqueName, useMongo } from '../../../support/suite-resources.ts';
import { testStack } from '../../../support/test-stack.ts';

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

export interface TrayApiHarness {
  readonly db: Db;
  readonly redis: RedisClient;
  /** The suite's own BAN_REDIS_PREFIX (the worker publishes there; the apps' ban cache reads it). */
  readonly banPrefix: string;
  /** A new app over the suite's database and Redis; options override the deps. */
  app(overrides?: Partial<TrayApiDeps>): Express;
}

/**
 * Registers hooks giving the enclosing suite its own database (indexes created), a Redis
 * connection and a rate-limit key prefix, so suites never share state.
 */
export function useTrayApi(options: { rateLimit?: number } = {}): TrayApiHarness {
  const mongo = useMongo();
  const keyPrefix = uniqueName('rl');
  const banPrefix = uniqueName('bans');
  let redis: RedisClient | undefined;
  let bans: BanCache | undefined;
  let storage: Storage | undefined;
  // As tray-service/main.ts builds it, one per database an app is given: on the test stack,
  // counts run in PostgreSQL.
  const counters = new Map<Db, Counter>();
  const counterFor = (db: Db) => {
    const known = counters.get(db);
    if (known) return known;
    if (!storage) throw new Error('useTrayApi: used before the suite started');
    const counter = createCounter(db, { storage, postgresUrl: testStack().postgresUrl });
    counters.set(db, counter);
    return counter;
  };
  before(async () => {
    redis = createRedis(testStack().redisUrl);
    storage = (await ensureTestCollections(mongo.db, apiCollections)).storage;
    bans = await startBanCache(redis, {
      prefix: banPrefix,
      refreshMs: 200,
      logger: createLogger({ name: 'test', level: 'silent' }),
    });
  });
  after(async () => {
    bans?.stop();
    redis?.disconnect();
    for (const counter of counters.values()) await counter.close();
  });
  const theBans = () => {
    if (!bans) throw new Error('useTrayApi: used before the suite started');
    return bans;
  };
  const harness: TrayApiHarness = {
    get db() {
      return mongo.db;
    },
    get redis() {
      if (!redis) throw new Error('useTrayApi: used before the suite started');
      return redis;
    },
    banPrefix,
    app(overrides = {}) {
      return createTrayApi({
        logger: createLogger({ name: 'test', level: 'silent' }),
        db: mongo.db,
        redis: harness.redis,
        registry: createMetricsRegistry('tray-service', false),
        verifyToken: createTokenVerifier(resolveJwtConfig({ JWT_SECRET: TEST_SECRET })),
        bans: theBans(),
        rateLimiter: createRateLimiter({
          redis: harness.redis,
          points: options.rateLimit ?? 10_000,
          windowMs: 60_000,
          keyPrefix,
        }),
        messages,
        settings: { pageSize: 10, networkId: 'net1', blockApi: true },
        ...overrides,
        counter: counterFor(overrides.db ?? mongo.db),
      });
    },
  };
  return harness;
}
