import { createHash, createHmac, randomBytes } from 'node:crypto';
import { AppError } from '../../shared/errors/app-error.ts';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import { guardedRedis } from '../../shared/redis/hung-redis-breaker.ts';
import type { AdminPrincipal } from './admin-principal.ts';

/**
 * Sessions of the admin listener's browser pages (the events console and the queue dashboard),
 * which cannot send a bearer header. Signing in (a form POST of the admin credential at
 * /admin/login) opens one; its random id travels in an HttpOnly cookie and names a record in
 * Redis, so every instance sees it and signing out ends it everywhere.
 *
 * A session is bound to the credential that opened it: one opened with ADMIN_TOKEN holds a keyed
 * fingerprint of that token and ends when the configured token changes; one opened with an admin
 * JWT holds the fingerprint of what verified it (AdminJwtVerifier: the key, audience, issuer) and
 * ends when that changes, or when the JWT expires (the record's lifetime is capped by its `exp`).
 * Redis holds a hash of the id, never the id itself nor a credential. Each session has a CSRF token of its own, which
 * the console sends back in `x-csrf-token` on every changing request (docs/operations.md#admin-authentication).
 */
export interface AdminSessions {
  /** Opens a session for a verified admin; `maxAgeMs` is for the cookie. */
  open(principal: AdminPrincipal, now: number): Promise<OpenedSession>;
  /** The session a cookie's id still stands for, or undefined. */
  find(id: string, now: number): Promise<AdminSession | undefined>;
  /** Ends the session a cookie's id stands for, if it was opened here (not by another deployment). */
  close(id: string): Promise<void>;
}

export interface AdminSession {
  principal: AdminPrincipal;
  /** Required in `x-csrf-token` on POST/PUT/PATCH/DELETE made with this session's cookie. */
  csrfToken: string;
  /** Epoch ms the session ends. */
  expiresAt: number;
}

export interface OpenedSession extends AdminSession {
  id: string;
  maxAgeMs: number;
}

type SessionRecord = { csrfToken: string; expiresAt: number } & (
  | { kind: 'token'; fingerprint: string }
  | { kind: 'jwt'; subject: string; jwtExpiresAt: number; keyFingerprint: string }
);

export interface AdminSessionOptions {
  redis: RedisClient;
  /** Prefix of the sessions' Redis keys. */
  prefix: string;
  /** Longest session; a JWT's expiry shortens it. */
  ttlMs: number;
  /** The ADMIN_TOKEN in force; sessions opened with another token are not accepted. */
  adminToken?: string | undefined;
  /**
   * The fingerprint of what verifies admin JWTs now (AdminJwtVerifier.keyFingerprint); undefined:
   * admin JWTs are off. Sessions opened with one end when it is not the one they hold.
   */
  adminJwtKey?: string | undefined;
}

const ID = /^[A-Za-z0-9_-]{43}$/;

const fingerprintOf = (token: string) =>
  createHmac('sha256', token).update('admin-session').digest('base64url');

export function createAdminSessions(options: AdminSessionOptions): AdminSessions {
  const { redis } = options;
  // A Redis that hangs fails the call within the budget, as an unreachable one does (503).
  const guarded = guardedRedis(redis);
  const keyOf = (id: string) =>
    `${options.prefix}:admin-session:${createHash('sha256').update(id).digest('base64url')}`;
  const current = options.adminToken === undefined ? undefined : fingerprintOf(options.adminToken);
  /**
   * Opened with the admin credentials in force here: another deployment's session (its own
   * ADMIN_TOKEN or admin JWT key), or one of before a key change, is not. A record of an earlier
   * version holds no fingerprint: it ends, as after a key change.
   */
  const ours = (record: SessionRecord) =>
    record.kind === 'token'
      ? current !== undefined && record.fingerprint === current
      : options.adminJwtKey !== undefined && record.keyFingerprint === options.adminJwtKey;
  return {
    async open(principal, now) {
      const id = randomBytes(32).toString('base64url');
      const csrfToken = randomBytes(32).toString('base64url');
      // Whole milliseconds: Redis takes no other PX, and a JWT's exp may have a fraction.
      const maxAgeMs = Math.floor(
        Math.min(options.ttlMs, principal.kind === 'jwt' ? principal.expiresAt - now : options.ttlMs),
      );
      // The credential passed its check a moment ago and has expired since (its last second):
      // refused as an expired one is, not as a failure of the service.
      if (maxAgeMs <= 0) throw new AppError('UNAUTHORIZED', 'the credential has expired');
      const expiresAt = now + maxAgeMs;
      const record: SessionRecord =
        principal.kind === 'token'
          ? { kind: 'token', fingerprint: current ?? '', csrfToken, expiresAt }
          : {
              kind: 'jwt',
              subject: principal.subject,
              jwtExpiresAt: principal.expiresAt,
              keyFingerprint: options.adminJwtKey ?? '',
              csrfToken,
              expiresAt,
            };
      await guarded(() => redis.set(keyOf(id), JSON.stringify(record), 'PX', maxAgeMs));
      return { id, maxAgeMs, principal, csrfToken, expiresAt };
    },
    async find(id, now) {
      if (!ID.test(id)) return undefined;
      const raw = await guarded(() => redis.get(keyOf(id)));
      if (raw === null) return undefined;
      const record = JSON.parse(raw) as SessionRecord;
      if (record.expiresAt <= now || !ours(record)) return undefined;
      const session = { csrfToken: record.csrfToken, expiresAt: record.expiresAt };
      if (record.kind === 'token') return { principal: { kind: 'token' }, ...session };
      return record.jwtExpiresAt > now
        ? {
            principal: { kind: 'jwt', subject: record.subject, expiresAt: record.jwtExpiresAt },
            ...session,
          }
        : undefined;
    },
    async close(id) {
      if (!ID.test(id)) return;
      // A browser sends one deployment's cookie to another on the same host (cookies are not kept
      // apart by port); on a shared Redis and prefix, deleting what it names ended the first
      // deployment's session, and with it that admin's open tails and exports there.
      const raw = await guarded(() => redis.get(keyOf(id)));
      if (raw !== null && ours(JSON.parse(raw) as SessionRecord)) await guarded(() => redis.del(keyOf(id)));
    },
  };
}
