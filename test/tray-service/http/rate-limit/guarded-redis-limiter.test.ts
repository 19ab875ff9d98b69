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
  it('gives nothing back from a memory window that began after its own ended', async () => {
    const { redis, hang } = hung();
    const keyPrefix = uniqueName('rl');
    const limiter = new GuardedRedisLimiter({ redis, keyPrefix, points: 3, duration: 3 });
    const admin = createRedis(testStack().redisUrl);
    const started = Date.now();
    const at = (ms: number) =>
      new Promise((resolve) => setTimeout(resolve, Math.max(0, started + ms - Date.now())));
    try {
      // Held past the budget, answered 4.6 s in: counted in memory at 1 s, in a window ending at 4 s.
      await admin.call('CLIENT', 'PAUSE', '4600', 'WRITE');
      expect((await limiter.consume('windows')).remainingPoints, 'counted in memory').to.equal(2);
      // A window of its own, while the first count is still unanswered (so in memory at once).
      await at(4_200);
      expect((await limiter.consume('windows')).remainingPoints, 'a new window').to.equal(2);
      await waitFor(
        async () => (await admin.get(`${keyPrefix}:windows`)) === '1',
        10_000,
        'counted in Redis',
      );
    } finally {
      await admin.call('CLIENT', 'UNPAUSE').catch(() => undefined);
      admin.disconnect();
    }
    hang();
    // The new window holds its own call: this one leaves one more.
    expect((await limiter.consume('windows')).remainingPoints).to.equal(1);
  });
});
