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

  // A heartbeat takes the open streams, then renews them a batch at a time. A stream that ended in
  // between released its slot at once; its renewal, still to come, found no lease and took it
  // again (as for a lease that lapsed), so the user's next stream found the limit full and
  // replaced one of their healthy ones.
  it('skips the lease of a stream that ended while the earlier batches were renewed', async () => {
    const redis = createRedis(testStack().redisUrl);
    const prefix = uniqueName('renew-ended');
    const slots = createStreamSlots(redis, { prefix, limit: 5, leaseMs: 60_000 });
    try {
      const count = CALLS_IN_FLIGHT + 10;
      const leases = Array.from({ length: count }, (_, i) => ({ userId: `u${i % 20}`, streamId: `s${i}` }));
      for (const lease of leases.slice(-10)) await slots.acquire(lease.userId, lease.streamId);
      const ended = new Set<number>();
      const last = count - 1;
      let first = true;
      const endingOne: Pick<StreamSlots, 'renew'> = {
        renew: async (userId, streamId) => {
          const kept = await slots.renew(userId, streamId);
          if (first) {
            // The last stream ends now: its slot goes, as the hub's remove() does.
            first = false;
            ended.add(last);
            await slots.release(leases[last]!.userId, leases[last]!.streamId);
          }
          return kept;
        },
      };
      await renewLeases(
        endingOne,
        leases,
        () => undefined,
        (index) => !ended.has(index),
      );
      expect(
        await redis.zscore(`${prefix}:streams:${leases[last]!.userId}`, leases[last]!.streamId),
      ).to.equal(null);
      expect(
        await redis.zscore(`${prefix}:streams:${leases[last - 1]!.userId}`, leases[last - 1]!.streamId),
      ).to.not.equal(null);
    } finally {
      redis.disconnect();
    }
  });
});
