import type Bull from 'bull';
import { Router } from 'express';
import type { Logger } from '../../shared/logging/create-logger.ts';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import type { DecisionsPort, EventsPort } from '../storage/port.ts';
import { createEventsQuery } from '../use-cases/events-query.ts';
import { createConsoleRouter } from './console/create-console-router.ts';
import { createDecisionsRouter } from './decisions-router.ts';
import { createEventsRouter } from './events-router.ts';
import { createQueueDashboard } from './queue-dashboard.ts';
import { createAdminSessions } from './admin-sessions.ts';
import { requireAdmin, requireAdminPage, type AdminAuthOptions } from './require-admin.ts';
import { createSignInRouter } from './sign-in-router.ts';

export interface AdminRouterDeps {
  /** The stored events (storage.events) and EVENTS_RETENTION_DAYS. */
  events: EventsPort;
  eventsRetentionDays: number;
  logger: Logger;
  auth: AdminAuthOptions;
  decisions: DecisionsPort;
  /** Queues shown on the dashboard (the webhook queue, moderation-decisions). */
  queues: readonly Bull.Queue[];
  limits: { defaultLimit: number; maxLimit: number };
  /** Where the router is mounted; the dashboard's pages link to `${mountPath}/queues`. */
  mountPath?: string;
  /** The admin sessions (shared by every instance). */
  redis: RedisClient;
  /** Prefix of the sessions' Redis keys (default `tray-admin`). */
  sessionPrefix?: string;
  /** Longest session (default 8 hours); an admin JWT's expiry shortens it. */
  sessionTtlMs?: number;
  clock?: () => number;
  /** QUEUE_DASHBOARD_WRITE: whether the dashboard may retry, clean, promote and pause. */
  dashboardWrite?: boolean;
}

/**
 * Everything under /admin; every route needs ADMIN_TOKEN, an admin JWT, or the session a browser
 * opened with one of them at /admin/login (docs/operations.md#admin-authentication).
 */
export function createAdminRouter(deps: AdminRouterDeps): Router {
  const router = Router();
  const mountPath = deps.mountPath ?? '/admin';
  const sessions = createAdminSessions({
    redis: deps.redis,
    prefix: deps.sessionPrefix ?? 'tray-admin',
    ttlMs: deps.sessionTtlMs ?? 8 * 3600 * 1000,
    adminToken: deps.auth.adminToken,
    adminJwts: deps.auth.verifyAdminJwt !== undefined,
  });
  const guard = { auth: deps.auth, sessions, mountPath, ...(deps.clock ? { clock: deps.clock } : {}) };
  // Sign-in, sign-out and the session's CSRF token: before any guard.
  router.use(createSignInRouter(guard));
  // bull-board's page cannot send the CSRF header; its writes are off unless QUEUE_DASHBOARD_WRITE.
  router.use(
    '/queues',
    createQueueDashboard({
      queues: deps.queues,
      basePath: `${mountPath}/queues`,
      guard: requireAdminPage({ ...guard, csrf: false }),
      signOutPath: `${mountPath}/logout`,
      write: deps.dashboardWrite ?? false,
    }),
  );
  // The events console: its assets carry no data and are public; a browser without a session
  // asking for its page is sent to the sign-in form.
  router.use(createConsoleRouter({ mountPath, requirePageSession: requireAdminPage(guard) }));
  router.use(requireAdmin(guard));
  const limits = {
    maxLimit: deps.limits.maxLimit,
    defaultLimit: Math.min(deps.limits.defaultLimit, deps.limits.maxLimit),
  };
  router.use(
    createEventsRouter({
      events: createEventsQuery(deps.events),
      retentionDays: deps.eventsRetentionDays,
      logger: deps.logger,
      ...limits,
    }),
  );
  router.use(createDecisionsRouter({ decisions: deps.decisions, ...limits }));
  return router;
}
