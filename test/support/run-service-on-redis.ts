import { join } from 'node:path';
import { freePort } from '../../scripts/lib/local-servers.ts';
import { cleanEnv, runScript, type ScriptResult } from './run-script.ts';
import { testStack } from './test-stack.ts';

/**
 * Starts `script` (receiver/main.ts or tray-service/main.ts) on `redisUrl` with everything else it
 * needs set (the spool under `dir`, a free port), and waits for it to exit: for the start-up checks
 * that refuse a Redis (the eviction policy, the database).
 */
export async function runServiceOnRedis(
  script: string,
  redisUrl: string,
  dir: string,
): Promise<ScriptResult> {
  const port = String(await freePort());
  return runScript(
    script,
    [],
    cleanEnv({
      REDIS_URL: redisUrl,
      MONGODB_URI: testStack().mongoUri,
      WEBHOOK_SECRETS: 'refused-redis-test-secret',
      JWT_SECRET: 'refused-redis-test-jwt-secret-of-32-characters',
      SPOOL_DIR: join(dir, 'spool'),
      RECEIVER_PORT: port,
      TRAY_PORT: port,
      LOG_LEVEL: 'silent',
    }),
  );
}
