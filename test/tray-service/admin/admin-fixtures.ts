import type Bull from 'bull';
import type { Express } from 'express';
import { SignJWT } from 'jose';
import { createMetricsRegistry } from '../../../shared/http/metrics-router.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createRedis } from '../../../shared/redis/create-redis.ts';
import { resolveJwtConfig } from '../../../shared/config/tray-api-config.ts';
import { createBanCache } from '../../../tray-service/api/auth/ban-cache.ts';
import { createTokenVerifier } from '../../../tray-service/api/auth/create-token-verifier.ts';
import { createTrayApi } from '../../../tray-service/api/create-tray-api.ts';
import { createRateLimiter } from '../../../tray-service/api/rate-limit/create-rate-limiter.ts';
import { createMessageRenderer } from '../../../tray-service/messages/create-message-renderer.ts';
import { testStack } from '../../support/test-stack.ts';
import { DAY_MS } from '../../../shared/time/durations.ts';
import type { StoredEvent } from '../../../tray-service/domain/stored-event.ts';
import type { TrayStorage } from '../../../tray-service/storage/port.ts';

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

/**
 * EVENTS_RETENTION_DAYS of the admin tests: long enough that the fixtures' events, received in
 * November 2026, stay unexpired whenever the tests run.
 */
export const EVENTS_RETENTION_DAYS = 36_500;

/** A stored event as the worker stores it, and whether it is already expired. */
export interface SeedEvent extends StoredEvent {
  expired?: boolean;
}

let counter = 0;
/** A valid stored event, stored 50 ms after its receipt; each call gets a distinct key. */
export function eventDoc(overrides: Partial<SeedEvent> = {}): SeedEvent {
  counter += 1;
  const receivedAt = overrides.receivedAt ?? new Date(Date.UTC(2026, 10, 20, 10, 0, 0) + counter * 1000);
  return {
    key: `key-${String(counter).padStart(8, '0')}`,
    event: 'post.didCreate',
    data: { post: { postId: `p-${counter}`, postedUserId: 'u-ana', text: 'hello' } },
    webhook: 'main',
    receivedAt,
    storedAt: new Date(receivedAt.getTime() + 50),
    status: 'stored',
    ...overrides,
  };
}

/** Stores the events through the port, as the worker does (an expired one with no retention left). */
export async function storeEvents(storage: TrayStorage, events: readonly SeedEvent[]): Promise<void> {
  for (const { storedAt, status, error, expired, ...event } of events) {
    await storage.events.store(
      event,
      { status, ...(error === undefined ? {} : { error }) },
      { retentionDays: expired ? 0 : EVENTS_RETENTION_DAYS, now: storedAt },
    );
  }
}

/** What the admin API shows as an event's expiry: its receipt plus EVENTS_RETENTION_DAYS. */
export const expiresAtOf = (event: StoredEvent) =>
  new Date(event.receivedAt.getTime() + EVENTS_RETENTION_DAYS * DAY_MS).toISOString();

/** The tray API as main.ts builds it, with the admin router mounted; close() releases Redis. */
export function adminApp(
  storage: TrayStorage,
  options: { queues?: Bull.Queue[]; maxLimit?: number; adminToken?: string | null } = {},
): { app: Express; close(): void } {
  const logger = createLogger({ name: 'test', level: 'silent' });
  const redis = createRedis(testStack().redisUrl);
  // No admin test bans anyone: the real cache, never started, holds an empty set.
  const bans = createBanCache(redis, { prefix: 'admin-tests-bans', refreshMs: 500, logger });
  const app = createTrayApi({
    logger,
    storage,
    redis,
    registry: createMetricsRegistry('test', false),
    verifyToken,
    bans,
    rateLimiter: createRateLimiter({ redis, points: 10_000, windowMs: 60_000, keyPrefix: 'admin-tests' }),
    messages,
    settings: { pageSize: 10, networkId: 'net1', blockApi: true },
    admin: {
      events: storage.events,
      eventsRetentionDays: EVENTS_RETENTION_DAYS,
      logger,
      decisions: storage.decisions,
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
