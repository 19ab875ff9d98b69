import type Bull from 'bull';
import type { Db } from 'mongodb';
import type { TrayConfig } from '../../shared/config/tray-config.ts';
import type { Logger } from '../../shared/logging/create-logger.ts';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import type { DecisionsRepository } from '../storage/mongodb/decisions-repository.ts';
import type { AdminAppDeps } from './create-admin-app.ts';
import type { TokenVerifier } from './require-admin.ts';

/** Builds the admin app's dependencies from the configuration (tray-service/main.ts). */
export function adminDepsFromConfig(
  config: TrayConfig,
  deps: {
    db: Db;
    logger: Logger;
    redis: RedisClient;
    decisions: DecisionsRepository;
    queues: readonly Bull.Queue[];
    /** The admin JWT verifier (own audience and issuer), when ADMIN_JWT_* are set. */
    verifyAdminJwt?: TokenVerifier | undefined;
  },
): AdminAppDeps {
  return {
    db: deps.db,
    logger: deps.logger,
    redis: deps.redis,
    decisions: deps.decisions,
    queues: deps.queues,
    auth: { adminToken: config.ADMIN_TOKEN, verifyAdminJwt: deps.verifyAdminJwt },
    limits: {
      defaultLimit: config.ADMIN_LIST_DEFAULT_LIMIT,
      maxLimit: config.ADMIN_LIST_MAX_LIMIT,
    },
    dashboardWrite: config.QUEUE_DASHBOARD_WRITE === 'on',
    trustProxy: config.ADMIN_TRUST_PROXY,
  };
}
