import { createLogger } from '../../../../shared/logging/create-logger.ts';
import { createRedis, type RedisClient } from '../../../../shared/redis/create-redis.ts';
import { startBanCache, type BanCache } from '../../../../tray-service/http/auth/ban-cache.ts';
import type { TrayStorage } from '../../../../tray-service/storage/port.ts';
import { testStack } from '../../../support/test-stack.ts';
import { useTrayStorage } from '../../../support/use-tray-storage.ts';
import { startLiveInstance, type LiveTimings, type StartedLiveInstance } from './start-live-instance.ts';
import { withCatchUpRead } from './with-catch-up-read.ts';

const silent = createLogger({ name: 'test', level: 'silent' });

export interface HeldCatchUp {
  readonly instance: StartedLiveInstance;
  /** The test's own connection to the stack's Redis (to publish changes on). */
  readonly redis: RedisClient;
  readonly storage: TrayStorage;
  /** Holds the catch-up reads of `userId` until the returned call (one user at a time). */
  hold(userId: string): () => void;
}

/**
 * Registers hooks giving the enclosing `describe` one live instance (five streams a user) whose
 * stream catch-ups of one user can be held at their first read: a catch-up that does not end,
 * while live changes of that user arrive.
 */
export function useHeldCatchUp(name: string, timings: LiveTimings): HeldCatchUp {
  const suite = useTrayStorage();
  let redis: RedisClient | undefined;
  let bans: BanCache | undefined;
  let instance: StartedLiveInstance | undefined;
  let held: { userId: string; until: Promise<void> } | undefined;

  before(async () => {
    redis = createRedis(testStack().redisUrl);
    bans = await startBanCache(redis, { prefix: `${name}-bans`, refreshMs: 200, logger: silent });
    instance = await startLiveInstance({
      storage: withCatchUpRead(suite.storage, async (userId, real) => {
        if (userId === held?.userId) await held.until;
        return real(userId);
      }),
      redis,
      subscriber: createRedis(testStack().redisUrl),
      bans,
      streamsPerUser: 5,
      timings,
    });
  });
  after(async () => {
    await instance?.close();
    bans?.stop();
    redis?.disconnect();
  });

  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('used outside the suite’s tests');
    return value;
  };
  return {
    get instance() {
      return started(instance);
    },
    get redis() {
      return started(redis);
    },
    get storage() {
      return suite.storage;
    },
    hold(userId) {
      let release: () => void = () => undefined;
      held = { userId, until: new Promise<void>((resolve) => (release = resolve)) };
      return release;
    },
  };
}
