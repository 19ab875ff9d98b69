import type Bull from 'bull';
import type { TrayConfig } from '../../shared/config/tray-config.ts';
import type { Logger } from '../../shared/logging/create-logger.ts';
import type { DecisionsPort, EventsPort } from '../storage/port.ts';
import type { AdminRouterDeps } from './create-admin-router.ts';
import type { TokenVerifier } from './require-admin.ts';

/** Builds the admin router's dependencies from the configuration (tray-service/main.ts). */
export function adminDepsFromConfig(
  config: TrayConfig,
  deps: {
    events: EventsPort;
    logger: Logger;
    decisions: DecisionsPort;
    queues: readonly Bull.Queue[];
    verifyToken?: TokenVerifier;
  },
): AdminRouterDeps {
  return {
    events: deps.events,
    eventsRetentionDays: config.EVENTS_RETENTION_DAYS,
    logger: deps.logger,
    decisions: deps.decisions,
    queues: deps.queues,
    auth: {
      adminToken: config.ADMIN_TOKEN,
      verifyToken: deps.verifyToken,
      roleClaim: config.ADMIN_ROLE_CLAIM,
      role: config.ADMIN_ROLE,
    },
    limits: {
      defaultLimit: config.ADMIN_LIST_DEFAULT_LIMIT,
      maxLimit: config.ADMIN_LIST_MAX_LIMIT,
    },
  };
}
