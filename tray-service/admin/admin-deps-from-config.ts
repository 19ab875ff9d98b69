import type Bull from 'bull';
import { isLoopbackHost } from '../../shared/config/loopback-host.ts';
import type { TrayConfig } from '../../shared/config/tray-config.ts';
import type { Logger } from '../../shared/logging/create-logger.ts';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import type {
  CommunityMembersPort,
  DecisionsPort,
  EventsPort,
  RemovalOutcomesPort,
} from '../storage/port.ts';
import type { BlockedWord } from '../domain/blocked-words.ts';
import type { ApplyJobDeps } from '../use-cases/apply-job.ts';
import type { AdminAppDeps } from './create-admin-app.ts';
import type { RedisEventsFeed } from './redis-events-feed.ts';
import type { AdminJwtVerifier } from './admin-jwt-verifier.ts';

/** Builds the admin app's dependencies from the configuration (tray-service/main.ts). */
export function adminDepsFromConfig(
  config: TrayConfig,
  deps: {
    events: EventsPort;
    logger: Logger;
    redis: RedisClient;
    decisions: DecisionsPort;
    communityMembers: CommunityMembersPort;
    /** What removal events changed (storage.removalOutcomes). */
    removalOutcomes?: RemovalOutcomesPort | undefined;
    queues: readonly Bull.Queue[];
    /** The admin JWT verifier (own audience and issuer), when ADMIN_JWT_* are set. */
    verifyAdminJwt?: AdminJwtVerifier | undefined;
    /** The worker's apply path, for replays. */
    apply: ApplyJobDeps;
    /** The live tail's subscription. */
    eventsFeed: RedisEventsFeed;
    blockedWords: readonly BlockedWord[];
  },
): AdminAppDeps {
  return {
    events: deps.events,
    logger: deps.logger,
    redis: deps.redis,
    decisions: deps.decisions,
    communityMembers: deps.communityMembers,
    ...(deps.removalOutcomes ? { removalOutcomes: deps.removalOutcomes } : {}),
    queues: deps.queues,
    auth: { adminToken: config.ADMIN_TOKEN, verifyAdminJwt: deps.verifyAdminJwt },
    limits: {
      defaultLimit: config.ADMIN_LIST_DEFAULT_LIMIT,
      maxLimit: config.ADMIN_LIST_MAX_LIMIT,
    },
    dashboardWrite: config.QUEUE_DASHBOARD_WRITE === 'on',
    exportMaxRows: config.ADMIN_EXPORT_MAX_ROWS,
    exportsMax: config.ADMIN_EXPORTS_MAX,
    tailsPerAdmin: config.ADMIN_TAILS_PER_ADMIN,
    replayMaxRunning: config.REPLAY_MAX_RUNNING,
    trustProxy: config.ADMIN_TRUST_PROXY,
    behindTls: config.ADMIN_BEHIND_TLS === 'on',
    // A proxy on this machine (ADMIN_TRUST_PROXY) may pass the browser's own Host on.
    loopbackNamesOnly:
      config.ADMIN_BEHIND_TLS === 'off' &&
      config.ADMIN_TRUST_PROXY === false &&
      isLoopbackHost(config.ADMIN_HOST),
    apply: deps.apply,
    eventsFeed: deps.eventsFeed,
    blockedWords: deps.blockedWords,
  };
}
