import type Bull from 'bull';
import { randomUUID } from 'node:crypto';
import type { BlockedWord } from '../domain/blocked-words.ts';
import type { ApplyJobDeps } from '../use-cases/apply-job.ts';
import { createEventCharts } from '../use-cases/event-charts.ts';
import { createReplays } from '../use-cases/replay-events.ts';
import { createBlockedWordsTest } from '../use-cases/test-blocked-words.ts';
import { createModerationTestRouter } from './moderation-test-router.ts';
import type { RedisEventsFeed } from './redis-events-feed.ts';
import { createRedisReplayProgress } from './redis-replay-progress.ts';
import { createReplayRouter } from './replay-router.ts';
import { createStatsRouter } from './stats-router.ts';
import { createTailRouter } from './tail-router.ts';
import { Router } from 'express';
import type { FailedAuthLimit } from '../../shared/http/failed-auth-limit.ts';
import { recordFailedAuth } from '../../shared/http/limit-failed-auth.ts';
import type { Logger } from '../../shared/logging/create-logger.ts';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import type {
  CommunityMembersPort,
  DecisionsPort,
  EventsPort,
  RemovalOutcomesPort,
} from '../storage/port.ts';
import { STREAM_PAGE_BYTES } from '../storage/stream-events.ts';
import { createEventDetail } from '../use-cases/event-detail.ts';
import { createRemovalChanges } from '../use-cases/removal-changes.ts';
import { createEventRecipients } from '../use-cases/event-recipients.ts';
import { createEventsQuery } from '../use-cases/events-query.ts';
import { createConsoleRouter } from './console/create-console-router.ts';
import { createDecisionsRouter } from './decisions-router.ts';
import { createEventsRouter } from './events-router.ts';
import { createQueueDashboard } from './queue-dashboard.ts';
import { createAdminSessions } from './admin-sessions.ts';
import { createConcurrencySlots } from './concurrency-slots.ts';
import { requireAdmin, requireAdminPage, stillAdmin, type AdminAuthOptions } from './require-admin.ts';
import { createSignInRouter } from './sign-in-router.ts';

export interface AdminRouterDeps {
  /** The stored events (storage.events), each with the expiry set when it was stored. */
  events: EventsPort;
  logger: Logger;
  auth: AdminAuthOptions;
  decisions: DecisionsPort;
  /** Whom a community's actions reached by membership (an event's recipients). */
  communityMembers: CommunityMembersPort;
  /** What removal events changed in the trays (storage.removalOutcomes); without it none is shown. */
  removalOutcomes?: RemovalOutcomesPort;
  /** Queues shown on the dashboard (the webhook queue, moderation-decisions). */
  queues: readonly Bull.Queue[];
  limits: { defaultLimit: number; maxLimit: number };
  /** Where the router is mounted; the dashboard's pages link to `${mountPath}/queues`. */
  mountPath?: string;
  /** ADMIN_BEHIND_TLS=on: a TLS proxy is in front, so the session cookie is always Secure. */
  behindTls?: boolean;
  /** Failed sign-ins per source address, shared with the tray API's count (AUTH_FAILURE_LIMIT). */
  failedAuth?: FailedAuthLimit;
  /** The admin sessions (shared by every instance). */
  redis: RedisClient;
  /** Prefix of the sessions' Redis keys (default `tray-admin`). */
  sessionPrefix?: string;
  /** Longest session (default 8 hours); an admin JWT's expiry shortens it. */
  sessionTtlMs?: number;
  clock?: () => number;
  /** QUEUE_DASHBOARD_WRITE: whether the dashboard may retry, clean, promote and pause. */
  dashboardWrite?: boolean;
  /** The events workers announce once applied (GET /events/tail); without it the tail answers 404. */
  eventsFeed?: RedisEventsFeed;
  /** How often an open tail sends a heartbeat and checks its credential again (default 15 s). */
  tailHeartbeatMs?: number;
  /** Bytes a tail may have waiting for a reader that falls behind before it is cut off (default 1 MiB). */
  tailMaxBufferedBytes?: number;
  /** How long an ended tail waits for a reader that takes nothing before dropping it (default 5 s). */
  tailEndGraceMs?: number;
  /** The worker's apply path, for replays; without it the replay routes answer 404. */
  apply?: ApplyJobDeps;
  /** Most events one replay of a filter may take (default 100,000). */
  replayMaxEvents?: number;
  /** REPLAY_MAX_RUNNING: replays of a filter running at once on this instance (default 2). */
  replayMaxRunning?: number;
  /** ADMIN_EXPORT_MAX_ROWS: the most events one export may send (default 1,000,000). */
  exportMaxRows?: number;
  /** ADMIN_EXPORTS_MAX: exports running at once on this instance (default 2). */
  exportsMax?: number;
  /** How long an export's writes may wait for a reader that takes nothing before it is cut off (default 60 s). */
  exportIdleMs?: number;
  /** The most payload bytes one page of the events list holds (default STREAM_PAGE_BYTES, 16 MiB). */
  eventsPageBytes?: number;
  /** ADMIN_TAILS_PER_ADMIN: open live tails per admin on this instance (default 10). */
  tailsPerAdmin?: number;
  /** The blocklisted words in force (MODERATION_WORDS, MODERATION_WORDS_FILE), for the rule tester. */
  blockedWords?: readonly BlockedWord[];
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
    adminJwtKey: deps.auth.verifyAdminJwt?.keyFingerprint,
  });
  const guard = { auth: deps.auth, sessions, mountPath, ...(deps.clock ? { clock: deps.clock } : {}) };
  // Everything here is an admin's (payloads, job data, sessions): nothing may stay in a browser's or
  // a proxy's cache after sign-out. The console's assets (no data) set their own revalidated caching.
  router.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });
  // Sign-in, sign-out and the session's CSRF token: before any guard.
  const { failedAuth, logger } = deps;
  router.use(
    createSignInRouter({
      ...guard,
      behindTls: deps.behindTls ?? false,
      ...(failedAuth ? { failedSignIn: (req) => recordFailedAuth(failedAuth, req, logger) } : {}),
    }),
  );
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
  router.use(
    createConsoleRouter({
      mountPath,
      listMaxLimit: deps.limits.maxLimit,
      requirePageSession: requireAdminPage(guard),
    }),
  );
  // The mount path itself, typed or bookmarked, and a landing page sign-in accepts: the console
  // (which sends a browser without a session on to the form).
  router.get('/', (_req, res) => res.redirect(303, `${mountPath}/console`));
  router.use(requireAdmin(guard));
  const limits = {
    maxLimit: deps.limits.maxLimit,
    defaultLimit: Math.min(deps.limits.defaultLimit, deps.limits.maxLimit),
  };
  const recipients = createEventRecipients(deps.communityMembers);
  const removalChanges = createRemovalChanges(deps.removalOutcomes);
  // Before the events router: /events/tail and /events/replay would be taken for keys.
  if (deps.eventsFeed) {
    router.use(
      createTailRouter({
        feed: deps.eventsFeed,
        stillAdmin: (req) => stillAdmin(req, guard),
        ...(deps.tailsPerAdmin === undefined ? {} : { tailsPerAdmin: deps.tailsPerAdmin }),
        ...(deps.clock ? { clock: deps.clock } : {}),
        ...(deps.tailHeartbeatMs === undefined ? {} : { heartbeatMs: deps.tailHeartbeatMs }),
        ...(deps.tailMaxBufferedBytes === undefined ? {} : { maxBufferedBytes: deps.tailMaxBufferedBytes }),
        ...(deps.tailEndGraceMs === undefined ? {} : { endGraceMs: deps.tailEndGraceMs }),
        logger: deps.logger,
      }),
    );
  }
  if (deps.apply) {
    const replayMaxEvents = deps.replayMaxEvents ?? 100_000;
    const logger = deps.logger;
    const replays = createReplays({
      events: deps.events,
      apply: deps.apply,
      progress: createRedisReplayProgress(deps.redis, deps.sessionPrefix ?? 'tray-admin'),
      newId: () => randomUUID(),
      maxEvents: replayMaxEvents,
      maxRunning: deps.replayMaxRunning ?? 2,
      onError: (error, event) =>
        logger.warn({ err: (error as Error).message, key: event?.key }, 'replay failed'),
    });
    router.use(createReplayRouter({ replays, mountPath, maxEvents: replayMaxEvents }));
  }
  router.use(
    createStatsRouter({
      charts: createEventCharts(deps.events),
      queues: deps.queues,
      ...(deps.clock ? { clock: deps.clock } : {}),
    }),
  );
  router.use(createModerationTestRouter(createBlockedWordsTest(deps.blockedWords ?? [])));
  router.use(
    createEventsRouter({
      events: createEventsQuery(deps.events, deps.eventsPageBytes ?? STREAM_PAGE_BYTES),
      detail: createEventDetail({
        events: deps.events,
        decisions: deps.decisions,
        recipients,
        removalChanges,
      }),
      recipients,
      removalChanges,
      logger: deps.logger,
      exportMaxRows: deps.exportMaxRows ?? 1_000_000,
      exports: createConcurrencySlots(deps.exportsMax ?? 2),
      exportIdleMs: deps.exportIdleMs ?? 60_000,
      // Checked as often as a tail's credential (at its heartbeats).
      credential: {
        stillAdmin: (req) => stillAdmin(req, guard),
        checkMs: deps.tailHeartbeatMs ?? 15_000,
        clock: deps.clock ?? Date.now,
      },
      ...limits,
    }),
  );
  router.use(createDecisionsRouter({ decisions: deps.decisions, ...limits }));
  return router;
}
