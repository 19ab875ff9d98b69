import type { ChildProcess } from 'node:child_process';
import { freePort } from '../../../scripts/lib/local-servers.ts';
import { cleanEnv, startScript } from '../../support/run-script.ts';
import { hs256Token } from '../../../scripts/lib/hs256-token.ts';
import { storageEnv, type StorageTarget } from './storage-target.ts';

/** The JWT_SECRET the tray process is started with, so tests can mint tokens it accepts. */
export const trayJwtSecret = 'reliability-fault-jwt-secret-32-characters';

/** The METRICS_TOKEN the tray process is started with (metrics are off without one). */
export const trayMetricsToken = 'reliability-tray-metrics-token-32-chars';

/** A bearer token for `userId` that a process started by startTrayProcess accepts. */
export const trayToken = (userId: string, expiresIn = '1h'): Promise<string> =>
  hs256Token(trayJwtSecret, userId, expiresIn);

export interface TrayProcess {
  readonly child: ChildProcess;
  readonly port: number;
  /** ADMIN_PORT: the admin listener's (it listens only when ADMIN_TOKEN or admin JWTs are set). */
  readonly adminPort: number;
  output(): string;
  kill(): Promise<void>;
}

/** tray-service/main.ts (worker + API) as its own process, so a fault test can SIGKILL it. */
export async function startTrayProcess(options: {
  redisUrl: string;
  /** REDIS_CLUSTER_NODES: when set, the process uses the cluster instead of redisUrl. */
  clusterSeeds?: string;
  /** The tray's storage, either adapter (the scenarios' checks open the same with openTargetStorage). */
  storage?: StorageTarget;
  /** The MongoDB storage; without it or `storage`, `env` names the storage (useTrayStorage's `env`). */
  mongoUri?: string;
  db?: string;
  prefix: string;
  /** Extra variables, e.g. RATE_LIMIT_CALLS. */
  env?: NodeJS.ProcessEnv;
}): Promise<TrayProcess> {
  const port = await freePort();
  // Its own admin port too: several processes at once must not collide on the default 8082.
  const adminPort = await freePort();
  const { child, output } = await startScript(
    'tray-service/main.ts',
    cleanEnv({
      REDIS_URL: options.redisUrl,
      ...(options.clusterSeeds ? { REDIS_CLUSTER_NODES: options.clusterSeeds } : {}),
      ...(options.mongoUri ? { MONGODB_URI: options.mongoUri, MONGODB_DB: options.db ?? 'tray' } : {}),
      ...(options.storage ? storageEnv(options.storage) : {}),
      QUEUE_PREFIX: options.prefix,
      TRAY_PORT: String(port),
      ADMIN_PORT: String(adminPort),
      JWT_SECRET: trayJwtSecret,
      METRICS_TOKEN: trayMetricsToken,
      // Fuzzers send thousands of unauthenticated calls from one address; the per-address limit
      // on failed authentication has tests of its own.
      AUTH_FAILURE_LIMIT: '1000000',
      LOG_LEVEL: 'info',
      ...options.env,
    }),
    /tray service listening/,
  );
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  return {
    child,
    port,
    adminPort,
    output,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
