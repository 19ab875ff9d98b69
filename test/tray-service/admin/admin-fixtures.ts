import { dayOf } from '../../../shared/tray/storage-keys.ts';
import type Bull from 'bull';
import type { Express } from 'express';
import { SignJWT } from 'jose';
import type { Db } from 'mongodb';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createRedis } from '../../../shared/redis/create-redis.ts';
import type { StoredEventDoc } from '../../../shared/tray/tray-record.ts';
import { resolveJwtConfig } from '../../../shared/config/tray-api-config.ts';
import { createTokenVerifier } from '../../../tray-service/api/auth/create-token-verifier.ts';
import { createDecisionsRepository } from '../../../tray-service/storage/mongodb/decisions-repository.ts';
import { testStack } from '../../support/test-stack.ts';
import { createAdminApp } from '../../../tray-service/admin/create-admin-app.ts';

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

/** An admin JWT: the tray API's key, but the admin audience and issuer (ADMIN_JWT_*). */
export const ADMIN_JWT = { audience: 'tray-admin', issuer: 'admin-tests' };
export const verifyAdminJwt = createTokenVerifier({
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

/** The admin app as main.ts builds it (its own listener); close() releases Redis. */
export function adminApp(
  db: Db,
  options: {
    queues?: Bull.Queue[];
    maxLimit?: number;
    /** null: no ADMIN_TOKEN. */
    adminToken?: string | null;
    /** false: admin JWTs are not accepted. */
    adminJwts?: boolean;
    dashboardWrite?: boolean;
    trustProxy?: false | number | string[];
  } = {},
): { app: Express; close(): void } {
  const logger = createLogger({ name: 'test', level: 'silent' });
  const redis = createRedis(testStack().redisUrl);
  const app = createAdminApp({
    db,
    logger,
    redis,
    decisions: createDecisionsRepository(db),
    queues: options.queues ?? [],
    auth: {
      adminToken: options.adminToken === null ? undefined : (options.adminToken ?? ADMIN_TOKEN),
      verifyAdminJwt: options.adminJwts === false ? undefined : verifyAdminJwt,
    },
    limits: { defaultLimit: 50, maxLimit: options.maxLimit ?? 500 },
    dashboardWrite: options.dashboardWrite ?? false,
    trustProxy: options.trustProxy ?? false,
  });
  return { app, close: () => redis.disconnect() };
}
