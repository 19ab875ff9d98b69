import { expect } from 'chai';
import { REDIS_CALL_BUDGET_MS } from '../../../shared/redis/hung-redis-breaker.ts';
import { isRedisUnavailable } from '../../../shared/redis/redis-failure.ts';
import { createStreamTickets } from '../../../tray-service/live/stream-tickets.ts';
import { failureOf, useHungRedis } from '../../support/hung-redis.ts';
import { uniqueName } from '../../support/suite-resources.ts';

// A Redis that hangs with its connection open: a ticket waited on it for as long as it hung, and
// with it the API call. Within the call's budget it fails as an unreachable Redis does (503 with
// Retry-After, map-redis-errors.ts).
describe('stream tickets while Redis hangs', function () {
  this.timeout(20_000);
  const hung = useHungRedis();

  it('fail an issue and a redemption within the budget, as Redis unavailable', async () => {
    const { redis, hang } = hung();
    const tickets = createStreamTickets(redis, uniqueName('tickets'));
    const ticket = await tickets.issue({ userId: 'u-1' });
    hang();
    for (const call of [tickets.issue({ userId: 'u-2' }), tickets.redeem(ticket)]) {
      const { error, ms } = await failureOf(call);
      expect(isRedisUnavailable(error), String(error)).to.equal(true);
      expect(ms).to.be.below(REDIS_CALL_BUDGET_MS + 1_000);
    }
  });
});
