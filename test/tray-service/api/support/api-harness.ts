import { SignJWT, type JWTPayload } from 'jose';
import type { Redis } from 'ioredis';
import type { Db } from 'mongodb';
import type { Express } from 'express';
import { resolveJwtConfig } from '../../../../shared/config/tray-api-config.ts';
import { createMetricsRegistry } from '../../../../shared/http/metrics-router.ts';
import { createLogger } from '../../../../shared/logging/create-logger.ts';
import { createRedis } from '../../../../shared/redis/create-redis.ts';
import { createTokenVerifier } from '../../../../tray-service/api/auth/create-token-verifier.ts';
import { createTrayApi, type TrayApiDeps } from '../../../../tray-service/api/create-tray-api.ts';
import { createRateLimiter } from '../../../../tray-service/api/rate-limit/create-rate-limiter.ts';
import { createMessageRenderer } from '../../../../tray-service/messages/create-message-renderer.ts';
import { ensureApiIndexes } from '../../../../tray-service/store/ensure-api-indexes.ts';
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
  readonly redis: Redis;
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
  let redis: Redis | undefined;
  before(async () => {
    redis = createRedis(testStack().redisUrl);
    await ensureApiIndexes(mongo.db);
  });
  after(() => redis?.disconnect());
  const harness: TrayApiHarness = {
    get db() {
      return mongo.db;
    },
    get redis() {
      if (!redis) throw new Error('useTrayApi: used before the suite started');
      return redis;
    },
    app(overrides = {}) {
      return createTrayApi({
        logger: createLogger({ name: 'test', level: 'silent' }),
        db: mongo.db,
        redis: harness.redis,
        registry: createMetricsRegistry('tray-service', false),
        verifyToken: createTokenVerifier(resolveJwtConfig({ JWT_SECRET: TEST_SECRET })),
        rateLimiter: createRateLimiter({
          redis: harness.redis,
          points: options.rateLimit ?? 10_000,
          windowMs: 60_000,
          keyPrefix,
        }),
        messages,
        settings: { pageSize: 10, networkId: 'net1', blockApi: true },
        ...overrides,
      });
    },
  };
  return harness;
}
