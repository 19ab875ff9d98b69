import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startRedis, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import { startReceiverProcess, type ReceiverProcess } from './receiver-process.ts';
import { startTrayProcess, type TrayProcess } from './tray-process.ts';

type TrayOptions = Parameters<typeof startTrayProcess>[0];

/** What a fault scenario runs on: a folder, a Redis of its own and the processes it started. */
export interface FaultStage {
  /** The scenario's temporary folder (Redis data, spools, other servers' data). */
  readonly dir: string;
  readonly redis: LocalServer;
  /** Every process pushed here is killed after each test, whether it passed or not. */
  readonly processes: (ReceiverProcess | TrayProcess)[];
  /**
   * A receiver process on the stage's Redis under `prefix`, spooling to `spool` in the stage's
   * folder (scenarios with several receivers give each its own), on `port` if given; killed after
   * the test.
   */
  startReceiver(prefix: string, spool?: string, port?: number): Promise<ReceiverProcess>;
  /** A tray process on the stage's Redis; killed after the test. */
  startTray(options: Omit<TrayOptions, 'redisUrl'>): Promise<TrayProcess>;
  /** Starts Redis again on the same port and data (AOF), as a restarted server would come back. */
  startRedis(): Promise<void>;
  killRedis(): Promise<void>;
}

/**
 * Mocha hooks for a fault scenario: a temporary folder and a redis-server of its own (the shared
 * test Redis cannot be killed without breaking every other suite), made before each test (`each`)
 * or once for the describe (`all`), and the scenario's processes killed after each test. Call
 * inside a describe.
 *
 * `redis: 'durable'` (the default) runs it as `npm start` does, with an append-only file fsynced
 * before each answer, so a scenario that kills and restarts it finds what it acknowledged.
 * `'volatile'` keeps no file: for scenarios that never kill it, which then do not pay an fsync on
 * each of the workers' queue writes (about 20 s a scenario in CI).
 */
export function useFaultStage(
  name: string,
  per: 'each' | 'all',
  options: { redis?: 'durable' | 'volatile' } = {},
): FaultStage {
  const durable = (options.redis ?? 'durable') === 'durable';
  let dir: string | undefined;
  let redis: LocalServer | undefined;
  let redisPort = 0;
  const processes: (ReceiverProcess | TrayProcess)[] = [];
  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the fault stage's ${what} is used before its hook ran`);
    return value;
  };
  const stage: FaultStage = {
    get dir() {
      return started(dir, 'folder');
    },
    get redis() {
      return started(redis, 'Redis');
    },
    processes,
    async startReceiver(prefix, spool = 'spool', port) {
      const receiver = await startReceiverProcess({
        redisUrl: stage.redis.url,
        prefix,
        spoolDir: join(stage.dir, spool),
        ...(port === undefined ? {} : { port }),
      });
      processes.push(receiver);
      return receiver;
    },
    async startTray(options) {
      const tray = await startTrayProcess({ ...options, redisUrl: stage.redis.url });
      processes.push(tray);
      return tray;
    },
    async startRedis() {
      redis = await startRedis({ dir: join(stage.dir, 'redis'), port: redisPort, persistent: durable });
    },
    killRedis: async () => {
      // Restarted without a file it would come back empty: the scenario would lose what it tests.
      if (!durable)
        throw new Error(`the fault stage "${name}" runs Redis without a file; use { redis: 'durable' }`);
      await stage.redis.stop('SIGKILL');
    },
  };
  const setUp = async () => {
    dir = mkdtempSync(join(tmpdir(), `reliability-${name}-`));
    redisPort = await freePort();
    await stage.startRedis();
  };
  const tearDown = async () => {
    await redis?.stop('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
    redis = undefined;
    dir = undefined;
  };
  const killProcesses = async () => {
    for (const child of processes.splice(0)) await child.kill();
  };
  if (per === 'each') {
    beforeEach(setUp);
    afterEach(async () => {
      await killProcesses();
      await tearDown();
    });
  } else {
    before(setUp);
    afterEach(killProcesses);
    after(tearDown);
  }
  return stage;
}
