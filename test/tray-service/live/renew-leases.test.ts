import { expect } from 'chai';
import { createRedis } from '../../../shared/redis/create-redis.ts';
import { CALLS_IN_FLIGHT } from '../../../tray-service/live/in-flight-batches.ts';
import { renewLeases } from '../../../tray-service/live/renew-leases.ts';
import { createStreamSlots, type StreamSlots } from '../../../tray-service/live/stream-slots.ts';
import { uniqueName } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';

describe('live/renew-leases', () => {
  // Sent all at once, a heartbeat's renewals of tens of thousands of streams queued behind each
  // other past a Redis call's budget, failed, and tripped the breaker other calls share.
  it('renews every lease with at most CALLS_IN_FLIGHT in flight, and names those a newer stream took', async () => {
    const redis = createRedis(testStack().redisUrl);
    const at = Date.now();
    const slots = createStreamSlots(redis, {
      prefix: uniqueName('renew'),
      limit: 1,
      leaseMs: 60_000,
      now: () => at,
    });
    try {
      const count = CALLS_IN_FLIGHT * 2 + 500;
      const leases = Array.from({ length: count }, (_, i) => ({ userId: `u${i}`, streamId: `s${i}` }));
      await Promise.all(leases.map((lease) => slots.acquire(lease.userId, lease.streamId)));
      // Two users' streams replaced by newer ones (limit 1): their renewals say so.
      await slots.acquire('u7', 's7-newer');
      await slots.acquire(`u${count - 1}`, 'last-newer');
      let inFlight = 0;
      let most = 0;
      let renewed = 0;
      const counting: Pick<StreamSlots, 'renew'> = {
        renew: async (userId, streamId) => {
          inFlight += 1;
          most = Math.max(most, inFlight);
          try {
            return await slots.renew(userId, streamId);
          } finally {
            inFlight -= 1;
            renewed += 1;
          }
        },
      };
      const replaced: number[] = [];
      expect(await renewLeases(counting, leases, (index) => replaced.push(index))).to.equal(0);
      expect(renewed).to.equal(count);
      expect(most).to.equal(CALLS_IN_FLIGHT);
      expect(replaced.sort((a, b) => a - b)).to.deep.equal([7, count - 1]);
    } finally {
      redis.disconnect();
    }
  });
});
