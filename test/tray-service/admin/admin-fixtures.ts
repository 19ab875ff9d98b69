import type Bull from 'bull';
import type { Express } from 'express';
import { SignJWT } from 'jose';
import request from 'supertest';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createRedis } from '../../../shared/redis/create-redis.ts';
import { resolveJwtConfig } from '../../../shared/config/tray-api-config.ts';
import { createAdminJwtVerifier } from '../../../tray-service/admin/admin-jwt-verifier.ts';
import { testStack } from '../../support/test-stack.ts';
import { createAdminApp, type AdminAppDeps } from '../../../tray-service/admin/create-admin-app.ts';
import { DAY_MS } from '../../../shared/time/durations.ts';
import type { StoredEvent } from '../../../tray-service/domain/stored-event.ts';
import type { TrayStorage } from '../../../tray-service/storage/port.ts';
import {
  createRedisEventsFeed,
  type RedisEventsFeed,
} from '../../../tray-service/admin/redis-events-feed.ts';
import { publishBans } from '../../../tray-service/bans/publish-bans.ts';
import type { BlockedWord } from '../../../tray-service/domain/blocked-words.ts';
import type { ApplyJobDeps } from '../../../tray-service/use-cases/apply-job.ts';

export const ADMIN_TOKEN = 'admin-token-for-tests-0123456789abcdef';
const JWT_SECRET = 'jwt-secret-for-admin-tests-0123456789';
const jwtKey = new TextEncoder().encode(JWT_SECRET);

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
    expiresAt: new Date(receivedAt.getTime() + (overrides.expired ? 0 : EVENTS_RETENTION_DAYS * DAY_MS)),
    status: 'stored',
    ...overrides,
  };
}

/** Stores the events through the port, as the worker does (an expired one with no retention left). */
export async function storeEvents(storage: TrayStorage, events: readonly SeedEvent[]): Promise<void> {
  for (const { storedAt, expiresAt: _expiresAt, status, error, expired, ...event } of events) {
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

/** An admin JWT: the tray API's key, but the admin audience and issuer (ADMIN_JWT_*). */
export const ADMIN_JWT = { audience: 'tray-admin', issuer: 'admin-tests' };
export const verifyAdminJwt = createAdminJwtVerifier({
  ...resolveJwtConfig({ JWT_SECRET }),
  audience: ADMIN_JWT.audience,
  issuer: ADMIN_JWT.issuer,
});

export function adminJwt(subject: string, expiresIn: string | number = '10m'): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(subject)
    .setAudience(ADMIN_JWT.audience)
    .setIssuer(ADMIN_JWT.issuer)
    .setExpirationTime(expiresIn)
    .sign(jwtKey);
}

/**
 * The admin app as main.ts builds it (its own listener) on the tray's storage, and the live tail's
 * feed (how many tails are open); close() releases Redis.
 */
export function adminApp(
  storage: TrayStorage,
  options: {
    queues?: Bull.Queue[];
    maxLimit?: number;
    /** null: no ADMIN_TOKEN. */
    adminToken?: string | null;
    /** false: admin JWTs are not accepted. */
    adminJwts?: boolean;
    dashboardWrite?: boolean;
    trustProxy?: false | string[];
    /** The blocklist of the rule tester (MODERATION_WORDS). */
    blockedWords?: BlockedWord[];
    /** STREAM_REDIS_PREFIX: where the tail listens for the worker's announcements. */
    streamPrefix?: string;
    /** The Redis of the sessions and the tail (default the suite's). */
    redisUrl?: string;
    /** The apply path replays run (default: the worker's, on this storage, with no moderation). */
    apply?: Partial<ApplyJobDeps>;
    /** Most events one replay of a filter may take. */
    replayMaxEvents?: number;
    clock?: () => number;
    /** Any other of the admin app's settings (the tail's heartbeat, the caps), as given. */
    deps?: Partial<AdminAppDeps>;
  } = {},
): { app: Express; eventsFeed: RedisEventsFeed; close(): void } {
  const logger = createLogger({ name: 'test', level: 'silent' });
  const redisUrl = options.redisUrl ?? testStack().redisUrl;
  // A test's own Redis may be stopped on purpose: its connections' errors are expected then.
  const connect = () => {
    const client = createRedis(redisUrl);
    if (options.redisUrl !== undefined) client.on('error', () => undefined);
    return client;
  };
  const redis = connect();
  const eventsFeed = createRedisEventsFeed({
    connect,
    prefix: options.streamPrefix ?? 'tray-live',
    logger,
  });
  const app = createAdminApp({
    events: storage.events,
    logger,
    redis,
    decisions: storage.decisions,
    communityMembers: storage.communityMembers,
    ...(storage.removalOutcomes ? { removalOutcomes: storage.removalOutcomes } : {}),
    queues: options.queues ?? [],
    auth: {
      adminToken: options.adminToken === null ? undefined : (options.adminToken ?? ADMIN_TOKEN),
      verifyAdminJwt: options.adminJwts === false ? undefined : verifyAdminJwt,
    },
    limits: { defaultLimit: 50, maxLimit: options.maxLimit ?? 500 },
    dashboardWrite: options.dashboardWrite ?? false,
    trustProxy: options.trustProxy ?? false,
    eventsFeed,
    apply: {
      storage,
      eventsRetentionDays: EVENTS_RETENTION_DAYS,
      trayRetentionDays: 90,
      networkId: 'default',
      publishBans: async (changed) => void (await publishBans(redis, 'tray-bans-admin-tests', changed)),
      ...options.apply,
    },
    blockedWords: options.blockedWords ?? [],
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.replayMaxEvents === undefined ? {} : { replayMaxEvents: options.replayMaxEvents }),
    ...options.deps,
  });
  return {
    app,
    eventsFeed,
    close: () => {
      void eventsFeed.close();
      redis.disconnect();
    },
  };
}

/**
 * Signs in at `/admin/login` of `target` (an app, or a listening server's base URL) with `token`
 * (ADMIN_TOKEN by default) and returns the session's `Cookie` header value.
 */
export async function sessionCookie(target: Express | string, token = ADMIN_TOKEN): Promise<string> {
  const res = await request(target).post('/admin/login').type('form').send({ token }).expect(303);
  return String(res.headers['set-cookie']).split(';')[0]!;
}
