import { expect } from 'chai';
import { REDIS_CALL_BUDGET_MS } from '../../../shared/redis/hung-redis-breaker.ts';
import { isRedisUnavailable } from '../../../shared/redis/redis-failure.ts';
import { createAdminSessions } from '../../../tray-service/admin/admin-sessions.ts';
import { failureOf, useHungRedis } from '../../support/hung-redis.ts';
import { uniqueName } from '../../support/suite-resources.ts';

// Every admin request reads its session from Redis: one that hangs with its connection open held
// each of them for as long as it hung. Within the budget they fail as with Redis unreachable (503).
describe('admin sessions while Redis hangs', function () {
  this.timeout(20_000);
  const hung = useHungRedis();

  it('fail an opening, a read and a closing within the budget, as Redis unavailable', async () => {
    const { redis, hang } = hung();
    const sessions = createAdminSessions({
      redis,
      prefix: uniqueName('sessions'),
      ttlMs: 60_000,
      adminToken: 'a'.repeat(32),
    });
    const { id } = await sessions.open({ kind: 'token' }, Date.now());
    hang();
    for (const call of [
      sessions.open({ kind: 'token' }, Date.now()),
      sessions.find(id, Date.now()),
      sessions.close(id),
    ]) {
      const { error, ms } = await failureOf(call);
      expect(isRedisUnavailable(error), String(error)).to.equal(true);
      expect(ms).to.be.below(REDIS_CALL_BUDGET_MS + 1_000);
    }
  });
});
