import { expect } from 'chai';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createRedis, type RedisClient } from '../../../shared/redis/create-redis.ts';
import { banKeys } from '../../../tray-service/bans/ban-keys.ts';
import { banRank } from '../../../tray-service/domain/ban-change.ts';
import { watchBanVersion, type BanVersionWatch } from '../../../tray-service/bans/watch-ban-version.ts';
import { useHungRedis } from '../../support/hung-redis.ts';
import { uniqueName } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import { waitFor } from '../../support/wait-for.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('watchBanVersion (real Redis)', () => {
  let redis: RedisClient;
  let versionKey: string;
  let rankKey: string;
  let stale: number;
  let watch: BanVersionWatch;
  beforeEach(async () => {
    redis = createRedis(testStack().redisUrl);
    const prefix = uniqueName('bans');
    versionKey = banKeys(prefix).version;
    rankKey = banKeys(prefix).rank;
    await redis.set(versionKey, '1000');
    stale = 0;
    watch = watchBanVersion({
      redis,
      prefix,
      everyMs: 20,
      onStale: () => (stale += 1),
      logger: createLogger({ name: 'test', level: 'silent' }),
    });
  });
  afterEach(() => {
    watch.stop();
    redis.disconnect();
  });

  it('takes the newest version it reads or is told, and asks for nothing while it holds', async () => {
    await waitFor(async () => watch.seen() === 1000, 2_000, 'the version read');
    watch.observe(1002);
    // Told: taken at once, before Redis says so too (read below, it would pass either way).
    expect(watch.seen()).to.equal(1002);
    await redis.set(versionKey, '1002');
    await sleep(100);
    expect(watch.seen()).to.equal(1002);
    expect(stale).to.equal(0);
  });

  it('asks for a republish when the version is gone', async () => {
    await waitFor(async () => watch.seen() === 1000, 2_000, 'the version read');
    await redis.del(versionKey);
    await waitFor(async () => stale > 0, 2_000, 'a republish asked for');
  });

  it('asks for a republish when the version went below the newest seen, and keeps that newest', async () => {
    watch.observe(1005);
    await waitFor(async () => stale > 0, 2_000, 'a republish asked for');
    expect(watch.seen()).to.equal(1005);
  });

  // A failover to a replica that lagged lost this worker's ban (its version 1002 with it), and
  // another publisher's change counted the version up to 1002 again: the number alone looked
  // right, and the banned user was let in until some worker restarted.
  it('asks for a republish when a change it published is gone, though the version is back up', async () => {
    await waitFor(async () => watch.seen() === 1000, 2_000, 'the version read');
    await redis.hset(rankKey, 'u-eve', String(banRank({ banned: true, at: 5_000 })));
    watch.published([{ userId: 'u-eve', banned: true, at: 5_000 }]);
    watch.observe(1002);
    await redis.set(versionKey, '1002');
    await sleep(100);
    expect(stale, 'nothing lost yet').to.equal(0);
    // The failover: the change is gone, and another publisher counts the version up again.
    await redis.hdel(rankKey, 'u-eve');
    await redis.set(versionKey, '1003');
    await waitFor(async () => stale > 0, 2_000, 'a republish asked for');
  });

  it('asks for nothing when a newer change of the same user, another publisher’s, replaced its own', async () => {
    await waitFor(async () => watch.seen() === 1000, 2_000, 'the version read');
    watch.published([{ userId: 'u-fay', banned: true, at: 5_000 }]);
    await redis.hset(rankKey, 'u-fay', String(banRank({ banned: false, at: 6_000 })));
    await sleep(150);
    expect(stale).to.equal(0);
  });
});

describe('watchBanVersion while Redis hangs', function () {
  this.timeout(10_000);
  const hung = useHungRedis();

  it('sends one check at a time, not one per interval', async () => {
    const { redis, hang } = hung();
    let gets = 0;
    // The real connection, its GETs counted.
    const counted = new Proxy(redis, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property, target);
        if (property === 'get') {
          return (...args: Parameters<RedisClient['get']>) => {
            gets += 1;
            return target.get(...args);
          };
        }
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    hang();
    const watch = watchBanVersion({
      redis: counted,
      prefix: uniqueName('bans'),
      everyMs: 20,
      onStale: () => undefined,
      logger: createLogger({ name: 'test', level: 'silent' }),
    });
    try {
      await sleep(300);
      expect(gets).to.equal(1);
    } finally {
      watch.stop();
    }
  });
});
