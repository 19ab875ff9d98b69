import { createHmac, randomBytes } from 'node:crypto';
import { safeEqual } from './require-admin.ts';

/**
 * The queue dashboard is a browser page, which cannot send a bearer header. The admin presents a
 * token once (`?token=`); the server answers with this short-lived session value in an HttpOnly,
 * SameSite=Strict cookie scoped to the dashboard's path. The value is `<expiry>.<HMAC>`: stateless
 * (any instance holding the same key accepts it) and it never contains the admin token itself.
 */
export interface DashboardSessions {
  issue(now: number): string;
  isValid(value: string, now: number): boolean;
  readonly ttlMs: number;
}

export function createDashboardSessions(options: { adminToken?: string; ttlMs: number }): DashboardSessions {
  // Derived from ADMIN_TOKEN so every instance agrees; rotating the token ends all sessions. Without
  // an ADMIN_TOKEN, a per-process key: sessions then last until this instance restarts.
  const key = options.adminToken
    ? createHmac('sha256', options.adminToken).update('queue-dashboard-session').digest()
    : randomBytes(32);
  const sign = (expiry: string) => createHmac('sha256', key).update(expiry).digest('base64url');
  return {
    ttlMs: options.ttlMs,
    issue(now) {
      const expiry = String(now + options.ttlMs);
      return `${expiry}.${sign(expiry)}`;
    },
    isValid(value, now) {
      const [expiry, mac, ...rest] = value.split('.');
      if (!expiry || !mac || rest.length > 0 || !/^\d{1,15}$/.test(expiry)) return false;
      return safeEqual(mac, sign(expiry)) && Number(expiry) > now;
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
