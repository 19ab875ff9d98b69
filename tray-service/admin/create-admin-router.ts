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
import { requireAdmin, type AdminAuthOptions } from './require-admin.ts';

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
  /** The dashboard's sessions (shared by every instance). */
  redis: RedisClient;
  /** QUEUE_DASHBOARD_WRITE: whether the dashboard may retry, clean, promote and pause. */
  dashboardWrite?: boolean;
}

/** Everything under /admin; every route needs ADMIN_TOKEN or an admin JWT. */
export function createAdminRouter(deps: AdminRouterDeps): Router {
  const router = Router();
  const mountPath = deps.mountPath ?? '/admin';
  // The dashboard has its own auth adapter (a browser cannot send a bearer header): mounted first.
  router.use(
    '/queues',
    createQueueDashboard({
      queues: deps.queues,
      auth: deps.auth,
      basePath: `${mountPath}/queues`,
      redis: deps.redis,
      write: deps.dashboardWrite ?? false,
    }),
  );
  // The events console: its assets carry no data and are public; its page needs an admin.
  router.use(createConsoleRouter({ mountPath, requirePageSession: requireAdmin(deps.auth) }));
  router.use(requireAdmin(deps.auth));
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
