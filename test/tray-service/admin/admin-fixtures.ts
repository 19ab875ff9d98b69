import { dayOf } from '../../../shared/tray/storage-keys.ts';
import type Bull from 'bull';
import type { Express } from 'express';
import { SignJWT } from 'jose';
import type { Db } from 'mongodb';
import { createMetricsRegistry } from '../../../shared/http/metrics-router.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createRedis } from '../../../shared/redis/create-redis.ts';
import type { StoredEventDoc } from '../../../shared/tray/tray-record.ts';
import { resolveJwtConfig } from '../../../shared/config/tray-api-config.ts';
import { createBanCache } from '../../../tray-service/api/auth/ban-cache.ts';
import { createTokenVerifier } from '../../../tray-service/api/auth/create-token-verifier.ts';
import { createTrayApi } from '../../../tray-service/api/create-tray-api.ts';
import { createRateLimiter } from '../../../tray-service/api/rate-limit/create-rate-limiter.ts';
import { createMessageRenderer } from '../../../tray-service/messages/create-message-renderer.ts';
import { createDecisionsRepository } from '../../../tray-service/storage/mongodb/decisions-repository.ts';
import { testStack } from '../../support/test-stack.ts';
import { createCounter } from '../../../tray-service/storage/mongodb/create-counter.ts';

export const ADMIN_TOKEN = 'admin-token-for-tests-0123456789abcdef';
const JWT_SECRET = 'jwt-secret-for-admin-tests-0123456789';
const jwtKey = new TextEncoder().encode(JWT_SECRET);

/** The tray API's own verifier: the admin API takes the same user tokens. */
export const verifyToken = createTokenVerifier(resolveJwtConfig({ JWT_SECRET }));
const messages = createMessageRenderer({ defaultLocale: 'en' });

export function userToken(userId: string, claims: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(userId)
    .setExpirationTime('10m')
    .sign(jwtKey);
}

let counter = 0;
/** A valid stored event; each call gets a distinct key. */
export function eventDoc(overrides: Partial<StoredEventDoc> = {}): StoredEventDoc {
  counter += 1;
  const receivedAt = overrides.receivedAt ?? new Date(Date.UTC(2026, 10, 20, 10, 0, 0) + counter * 1000);
  return {
    _id: `key-${String(counter).padStart(8, '0')}`,
    event: 'post.didCreate',
    data: { post: { postId: `p-${counter}`, postedUserId: 'u-ana', text: 'hello' } },
    webhook: 'main',
    receivedAt,
    storedAt: new Date(receivedAt.getTime() + 50),
    expiresAt: new Date(Date.now() + 30 * 24 * 3600 * 1000),
    expiresDay: dayOf(Date.now() + 30 * 24 * 3600 * 1000),
    status: 'stored',
    ...overrides,
  };
}

/** The tray API as main.ts builds it, with the admin router mounted; close() releases Redis. */
export function adminApp(
  db: Db,
  options: { queues?: Bull.Queue[]; maxLimit?: number; adminToken?: string | null } = {},
): { app: Express; close(): void } {
  const logger = createLogger({ name: 'test', level: 'silent' });
  const redis = createRedis(testStack().redisUrl);
  // No admin test bans anyone: the real cache, never started, holds an empty set.
  const bans = createBanCache(redis, { prefix: 'admin-tests-bans', refreshMs: 500, logger });
  const app = createTrayApi({
    logger,
    db,
    // The admin tests call no tray route that counts: the driver's count is enough here.
    counter: createCounter(db, { storage: 'mongodb' }),
    redis,
    registry: createMetricsRegistry('test', false),
    verifyToken,
    bans,
    rateLimiter: createRateLimiter({ redis, points: 10_000, windowMs: 60_000, keyPrefix: 'admin-tests' }),
    messages,
    settings: { pageSize: 10, networkId: 'net1', blockApi: true },
    admin: {
      db,
      logger,
      decisions: createDecisionsRepository(db),
      queues: options.queues ?? [],
      auth: {
        adminToken: options.adminToken === null ? undefined : (options.adminToken ?? ADMIN_TOKEN),
        verifyToken,
        roleClaim: 'role',
        role: 'admin',
      },
      limits: { defaultLimit: 50, maxLimit: options.maxLimit ?? 500 },
    },
  });
  return { app, close: () => redis.disconnect() };
}
