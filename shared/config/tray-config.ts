import { commonShape, withRedisTarget } from './common-config.ts';
import { opsShape } from './ops-config.ts';
import { checkSecretsApart } from './secrets-apart.ts';
import { ConfigError } from '../errors/config-error.ts';
import { z } from 'zod';
import { STARTUP_WAIT_MS } from '../process/wait-for-dependency.ts';
import { port, positiveInt } from './env-types.ts';
import { parseEnv, type Env } from './parse-env.ts';
import { trayAbuseShape } from './tray-abuse-config.ts';
import { trayAdminShape } from './tray-admin-config.ts';
import { checkAdminListener, trayAdminAccessShape } from './tray-admin-access-config.ts';
import { trayListenShape } from './listen-config.ts';
import { trayApiShape } from './tray-api-config.ts';
import { trayBanShape } from './tray-ban-config.ts';
import { trayMessagesShape } from './tray-messages-config.ts';
import { checkModerationWebhook, trayModerationWebhookShape } from './tray-moderation-webhook-config.ts';
import { trayPlatformShape } from './tray-platform-config.ts';
import { trayStorageShape } from './tray-storage-config.ts';
import { trayStreamShape } from './tray-stream-config.ts';
import { trayWorkerShape } from './tray-worker-config.ts';

export const trayShape = {
  ...commonShape,
  ...opsShape,
  TRAY_PORT: port(8081),
  ...trayListenShape,
  /**
   * What this process runs: `all` (the API with its live streams, and the queue's worker), `api`
   * (no worker: stream servers scale apart from the workers, their memory free of the jobs'), or
   * `worker` (no API: only /healthz, /readyz and /metrics on TRAY_PORT).
   */
  TRAY_ROLE: z.enum(['all', 'api', 'worker'], { error: 'expected "all", "api" or "worker"' }).default('all'),
  /**
   * How long start-up waits for the database and then Redis to answer before it stops with exit
   * code 1 (docs/operations.md#before-exposing-a-port): shorter where an orchestrator restarts the
   * process with its own backoff, longer where the database comes up slowly beside it.
   */
  TRAY_STARTUP_WAIT_MS: positiveInt(STARTUP_WAIT_MS, 3_600_000),
  ...trayStorageShape,
  ...trayWorkerShape,
  ...trayPlatformShape,
  ...trayApiShape,
  ...trayBanShape,
  ...trayMessagesShape,
  ...trayAdminShape,
  ...trayAdminAccessShape,
  ...trayStreamShape,
  ...trayModerationWebhookShape,
  ...trayAbuseShape,
};

export type TrayConfig = ReturnType<typeof loadTrayConfig>;

export function loadTrayConfig(env: Env) {
  const config = withRedisTarget(parseEnv(trayShape, env));
  checkModerationWebhook(config);
  checkSecretsApart(config);
  checkAdminListener(config);
  checkRetryDelays(config);
  checkListLimits(config);
  return config;
}

/** A default page above the largest would be cut to it: not what was asked for. */
function checkListLimits(config: { ADMIN_LIST_DEFAULT_LIMIT: number; ADMIN_LIST_MAX_LIMIT: number }) {
  if (config.ADMIN_LIST_DEFAULT_LIMIT <= config.ADMIN_LIST_MAX_LIMIT) return;
  throw new ConfigError([
    {
      variable: 'ADMIN_LIST_DEFAULT_LIMIT',
      message: `must be at most ADMIN_LIST_MAX_LIMIT (${config.ADMIN_LIST_MAX_LIMIT})`,
    },
  ]);
}

/** A first retry delay above the longest would be cut to it at once: not what was asked for. */
function checkRetryDelays(config: { TRAY_RETRY_FIRST_DELAY_MS: number; TRAY_RETRY_MAX_DELAY_MS: number }) {
  if (config.TRAY_RETRY_FIRST_DELAY_MS <= config.TRAY_RETRY_MAX_DELAY_MS) return;
  throw new ConfigError([
    {
      variable: 'TRAY_RETRY_FIRST_DELAY_MS',
      message: `must be at most TRAY_RETRY_MAX_DELAY_MS (${config.TRAY_RETRY_MAX_DELAY_MS}): the waits double from it up to that`,
    },
  ]);
}
