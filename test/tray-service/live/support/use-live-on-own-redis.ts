import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startRedis, type LocalServer } from '../../../../scripts/lib/local-servers.ts';
import { createLogger } from '../../../../shared/logging/create-logger.ts';
import { createRedis, type RedisClient } from '../../../../shared/redis/create-redis.ts';
import { startBanCache, type BanCache } from '../../../../tray-service/http/auth/ban-cache.ts';
import type { TrayStorage } from '../../../../tray-service/storage/port.ts';
import { startBlackholeProxy, type BlackholeProxy } from '../../../support/blackhole-proxy.ts';
import { startLiveInstance, type LiveTimings, type StartedLiveInstance } from './start-live-instance.ts';

const silent = createLogger({ name: 'test', level: 'silent' });

export interface LiveOnOwnRedis {
  readonly instance: StartedLiveInstance;
  /** The instance's command connection (publish through it as the worker would). */
  readonly redis: RedisClient;
  /** The instance's subscriber connection. */
  readonly subscriber: RedisClient;
  /** The Redis server, as it runs now (restartRedis replaces it). */
  readonly redisServer: LocalServer;
  /** Starts Redis again on the same port and files, after the test stopped it. */
  restartRedis(): Promise<LocalServer>;
  /** The proxy the subscriber connects through, with `subscriberThroughProxy`. */
  readonly proxy: BlackholeProxy;
}

/**
 * A live instance on a Redis of the suite's own, which its tests stop and restart (an outage):
 * started before the suite, on the storage `storage()` gives then, and closed after it. The
 * connections' errors during the outage are the point of such tests, so they are not reported.
 */
export function useLiveOnOwnRedis(
  name: string,
  storage: () => TrayStorage,
  timings?: LiveTimings,
  options: {
    subscriberThroughProxy?: boolean;
    /**
     * The subscriber signs in as this Redis user, made with every command and key but no channel
     * (its SUBSCRIBE is refused until the test grants one: ACL SETUSER <user> allchannels).
     */
    subscriberUser?: string;
    /** STREAMS_PER_USER (5 by default). */
    streamsPerUser?: number;
  } = {},
): LiveOnOwnRedis {
  let dir = '';
  let port = 0;
  let server: LocalServer | undefined;
  let redis: RedisClient | undefined;
  let subscriber: RedisClient | undefined;
  let proxy: BlackholeProxy | undefined;
  let bans: BanCache | undefined;
  let instance: StartedLiveInstance | undefined;
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the live instance is used before its suite started it');
    return value;
  };
  const startServer = async () => {
    server = await startRedis({ dir: join(dir, 'redis'), port, persistent: true });
    return server;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), `${name}-`));
    port = await freePort();
    const { url } = await startServer();
    redis = createRedis(url);
    redis.on('error', () => undefined);
    if (options.subscriberThroughProxy) proxy = await startBlackholeProxy(port);
    const user = options.subscriberUser;
    if (user !== undefined)
      await redis.call(
        'ACL',
        'SETUSER',
        user,
        'reset',
        'on',
        `>${user}-password`,
        '~*',
        'resetchannels',
        '+@all',
      );
    const address = proxy ? `127.0.0.1:${proxy.port}` : new URL(url).host;
    subscriber = createRedis(
      user === undefined ? `redis://${address}` : `redis://${user}:${user}-password@${address}`,
    );
    subscriber.on('error', () => undefined);
    bans = await startBanCache(redis, { prefix: 'bans', refreshMs: 200, logger: silent });
    instance = await startLiveInstance({
      storage: storage(),
      redis,
      subscriber,
      bans,
      streamsPerUser: options.streamsPerUser ?? 5,
      ...(timings ? { timings } : {}),
    });
  });
  after(async () => {
    await instance?.close();
    bans?.stop();
    redis?.disconnect();
    await proxy?.close();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  return {
    get instance() {
      return started(instance);
    },
    get redis() {
      return started(redis);
    },
    get subscriber() {
      return started(subscriber);
    },
    get redisServer() {
      return started(server);
    },
    restartRedis: startServer,
    get proxy() {
      return started(proxy);
    },
  };
}
