import { expect } from 'chai';
import { once } from 'node:events';
import { GuardedRedisLimiter } from '../../../../tray-service/http/rate-limit/guarded-redis-limiter.ts';
import { createRedis } from '../../../../shared/redis/create-redis.ts';
import { useHungRedis } from '../../../support/hung-redis.ts';
import { uniqueName } from '../../../support/suite-resources.ts';
import { testStack } from '../../../support/test-stack.ts';
import { waitFor } from '../../../support/wait-for.ts';

// A count that outlasts its budget is made in memory at once; the one sent to Redis is still out
// and ends later, by an answer or by the connection's drop. Either way the call must stay counted
// once (docs/tray-api.md#rate-limit): a second count would refuse a caller's calls early.
describe('GuardedRedisLimiter: a count that ran out of its budget', function () {
  this.timeout(30_000);
  const hung = useHungRedis();

  it('is not counted in memory again when its connection is dropped under it', async () => {
    const { redis, hang } = hung();
    const limiter = new GuardedRedisLimiter({ redis, keyPrefix: uniqueName('rl'), points: 3, duration: 60 });
    hang();
    expect((await limiter.consume('dropped')).remainingPoints, 'counted in memory').to.equal(2);
    // Unanswered for the breaker's 5 s: the connection is dropped, failing the count, and made again.
    await once(redis, 'ready');
    // Counted in memory once: this one, in memory too while Redis hangs again, leaves one more.
    hang();
    expect((await limiter.consume('dropped')).remainingPoints).to.equal(1);
  });

  it('is not left counted in memory too once Redis answers it late', async () => {
    const { redis, hang } = hung();
    const keyPrefix = uniqueName('rl');
    const limiter = new GuardedRedisLimiter({ redis, keyPrefix, points: 3, duration: 60 });
    const admin = createRedis(testStack().redisUrl);
    try {
      // Held at the server past the 1 s budget, then answered.
      await admin.call('CLIENT', 'PAUSE', '2500', 'WRITE');
      expect((await limiter.consume('late')).remainingPoints, 'counted in memory').to.equal(2);
      await waitFor(async () => (await admin.get(`${keyPrefix}:late`)) === '1', 10_000, 'counted in Redis');
    } finally {
      await admin.call('CLIENT', 'UNPAUSE').catch(() => undefined);
      admin.disconnect();
    }
    // Redis holds the call's count; memory, which counts only while Redis is away, does not.
    hang();
    expect((await limiter.consume('late')).remainingPoints).to.equal(2);
  });

  // The memory count of a late call may have ended with its window; giving a point back then took
  // it from the next window, so a call counted there went uncounted.
  it('gives nothing back from a memory window that began after its own ended', async function () {
    this.timeout(90_000);
    // The second call must come after the first one's memory window ended and before Redis
    // answers the first: a loaded machine may miss that gap, and the scenario is run again then
    // (a fixed time from the start missed it on a busy CI, and the test failed for it).
    for (let attempt = 1; ; attempt++) {
      const { redis, hang } = hung();
      const keyPrefix = uniqueName('rl');
      const limiter = new GuardedRedisLimiter({ redis, keyPrefix, points: 3, duration: 3 });
      const admin = createRedis(testStack().redisUrl);
      let inGap = false;
      try {
        // Held past the budget, answered 4.6 s in (the breaker drops a call unanswered for 5 s):
        // counted in memory about 1 s in, in a window of 3 s from then.
        const paused = Date.now();
        await admin.call('CLIENT', 'PAUSE', '4600', 'WRITE');
        expect((await limiter.consume('windows')).remainingPoints, 'counted in memory').to.equal(2);
        // Its window began at the latest when that call returned: 3.05 s later it has ended.
        await new Promise((resolve) => setTimeout(resolve, 3_050));
        inGap = Date.now() - paused < 4_450;
        if (inGap) {
          // A window of its own, while the first count is still unanswered (so in memory at once).
          expect((await limiter.consume('windows')).remainingPoints, 'a new window').to.equal(2);
        }
        await waitFor(
          async () => (await admin.get(`${keyPrefix}:windows`)) === '1',
          10_000,
          'counted in Redis',
        );
      } finally {
        await admin.call('CLIENT', 'UNPAUSE').catch(() => undefined);
        admin.disconnect();
      }
      if (!inGap) {
        if (attempt < 3) continue;
        expect.fail('the machine never reached the second call within the gap, in 3 attempts');
      }
      hang();
      // The new window holds its own call: this one leaves one more.
      expect((await limiter.consume('windows')).remainingPoints).to.equal(1);
      return;
    }
  });
});
