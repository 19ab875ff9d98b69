import { expect } from 'chai';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createRedis, type RedisClient } from '../../../shared/redis/create-redis.ts';
import { banKeys } from '../../../tray-service/bans/ban-keys.ts';
import { watchBanVersion, type BanVersionWatch } from '../../../tray-service/bans/watch-ban-version.ts';
import { uniqueName } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import { waitFor } from '../../support/wait-for.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('watchBanVersion (real Redis)', () => {
  let redis: RedisClient;
  let versionKey: string;
  let stale: number;
  let watch: BanVersionWatch;
  beforeEach(async () => {
    redis = createRedis(testStack().redisUrl);
    const prefix = uniqueName('bans');
    versionKey = banKeys(prefix).version;
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
});
