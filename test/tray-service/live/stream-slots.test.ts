import { expect } from 'chai';
import { createRedis } from '../../../shared/redis/create-redis.ts';
import { createStreamSlots } from '../../../tray-service/live/stream-slots.ts';
import { uniqueName } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';

describe('live/stream-slots', () => {
  it('counts a stream again once its heartbeat renews a lease that lapsed while it stayed open (Redis unreachable for longer than the lease)', async () => {
    const redis = createRedis(testStack().redisUrl);
    const slots = createStreamSlots(redis, { prefix: uniqueName('slots'), limit: 2, leaseMs: 200 });
    try {
      expect(await slots.acquire('u', 'open-1')).to.equal(true);
      expect(await slots.acquire('u', 'open-2')).to.equal(true);
      expect(await slots.acquire('u', 'open-3'), 'a third while two are held').to.equal(false);
      // No renewal reached Redis for longer than the lease; then the heartbeats renew both.
      await new Promise((resolve) => setTimeout(resolve, 300));
      await slots.renew('u', 'open-1');
      await slots.renew('u', 'open-2');
      expect(await slots.acquire('u', 'open-3'), 'a third while two are open and renewing').to.equal(false);
      await slots.release('u', 'open-1');
      expect(await slots.acquire('u', 'open-3'), 'a third once one of them closed').to.equal(true);
    } finally {
      redis.disconnect();
    }
  });
});
