import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import type { AdminPrincipal } from './require-admin.ts';

/**
 * Sessions of the queue dashboard, a browser page that cannot send a bearer header. Signing in
 * (a form POST of the admin credential) opens one; its random id travels in an HttpOnly cookie and
 * names a record in Redis, so every instance sees it and signing out ends it everywhere.
 *
 * A session is bound to the credential that opened it: one opened with ADMIN_TOKEN holds a keyed
 * fingerprint of that token and ends when the configured token changes; one opened with an admin
 * JWT ends when that JWT expires (the record's lifetime is capped by its `exp`). Redis holds a hash
 * of the id, never the id itself nor a credential.
 */
export interface DashboardSessions {
  /** Opens a session for a verified admin; `maxAgeMs` is for the cookie. */
  open(principal: AdminPrincipal, now: number): Promise<{ id: string; maxAgeMs: number }>;
  /** The admin a cookie's id still stands for, or undefined. */
  find(id: string, now: number): Promise<AdminPrincipal | undefined>;
  close(id: string): Promise<void>;
}

type SessionRecord =
  { kind: 'token'; fingerprint: string } | { kind: 'jwt'; subject: string; expiresAt: number };

export interface DashboardSessionOptions {
  redis: RedisClient;
  /** Prefix of the sessions' Redis keys. */
  prefix: string;
  /** Longest session; a JWT's expiry shortens it. */
  ttlMs: number;
  /** The ADMIN_TOKEN in force; sessions opened with another token are not accepted. */
  adminToken?: string | undefined;
  /** Whether admin JWTs are accepted now; sessions opened with one end when they are not. */
  adminJwts: boolean;
}

const ID = /^[A-Za-z0-9_-]{43}$/;

const fingerprintOf = (token: string) =>
  createHmac('sha256', token).update('queue-dashboard-session').digest('base64url');

export function createDashboardSessions(options: DashboardSessionOptions): DashboardSessions {
  const { redis } = options;
  const keyOf = (id: string) =>
    `${options.prefix}:dashboard-session:${createHash('sha256').update(id).digest('base64url')}`;
  const current = options.adminToken === undefined ? undefined : fingerprintOf(options.adminToken);
  return {
    async open(principal, now) {
      const id = randomBytes(32).toString('base64url');
      const record: SessionRecord =
        principal.kind === 'token'
          ? { kind: 'token', fingerprint: current ?? '' }
          : { kind: 'jwt', subject: principal.subject, expiresAt: principal.expiresAt };
      const maxAgeMs = Math.min(
        options.ttlMs,
        principal.kind === 'jwt' ? principal.expiresAt - now : options.ttlMs,
      );
      if (maxAgeMs <= 0) throw new Error('the credential has expired');
      await redis.set(keyOf(id), JSON.stringify(record), 'PX', maxAgeMs);
      return { id, maxAgeMs };
    },
    async find(id, now) {
      if (!ID.test(id)) return undefined;
      const raw = await redis.get(keyOf(id));
      if (raw === null) return undefined;
      const record = JSON.parse(raw) as SessionRecord;
      if (record.kind === 'token') {
        return current !== undefined && record.fingerprint === current ? { kind: 'token' } : undefined;
      }
      return options.adminJwts && record.expiresAt > now
        ? { kind: 'jwt', subject: record.subject, expiresAt: record.expiresAt }
        : undefined;
    },
    async close(id) {
      if (ID.test(id)) await redis.del(keyOf(id));
    },
  };
}

/** Reads one cookie from a Cookie header (no cookie-parser dependency for a single value). */
export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) return part.slice(index + 1).trim();
  }
  return undefined;
}
