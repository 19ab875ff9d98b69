import { expect } from 'chai';
import { REDIS_CALL_BUDGET_MS } from '../../../shared/redis/hung-redis-breaker.ts';
import { isRedisUnavailable } from '../../../shared/redis/redis-failure.ts';
import { createRedisReplayProgress } from '../../../tray-service/admin/redis-replay-progress.ts';
import type { ReplayProgress } from '../../../tray-service/use-cases/replay-events.ts';
import { failureOf, useHungRedis } from '../../support/hung-redis.ts';
import { uniqueName } from '../../support/suite-resources.ts';

describe('replay progress in Redis (createRedisReplayProgress)', function () {
  this.timeout(20_000);
  const hung = useHungRedis();
  const progress = (id: string): ReplayProgress => ({
    id,
    state: 'running',
    filter: { event: 'post.didCreate', since: new Date('2026-11-20T00:00:00Z') },
    total: 3,
    done: 1,
    failed: 0,
    expired: 0,
    startedAt: new Date('2026-11-20T10:00:00Z'),
    updatedAt: new Date('2026-11-20T10:00:05Z'),
  });

  it('gives back what it saved, its times and filter times as dates', async () => {
    const { redis } = hung();
    const store = createRedisReplayProgress(redis, uniqueName('replays'));
    await store.save(progress('r-1'));
    expect(await store.get('r-1')).to.deep.equal(progress('r-1'));
    expect(await store.get('r-none')).to.equal(undefined);
  });

  // A replay's start saves its progress while it holds one of REPLAY_MAX_RUNNING slots, and its
  // end saves it again before letting the slot go: against a Redis that hung with its connection
  // open, each waited as long as it hung, the request too, and two such starts took every slot.
  it('fails a save and a read within the budget while Redis hangs, as Redis unavailable', async () => {
    const { redis, hang } = hung();
    const store = createRedisReplayProgress(redis, uniqueName('replays'));
    await store.save(progress('r-2'));
    hang();
    for (const call of [store.save(progress('r-3')), store.get('r-2')]) {
      const { error, ms } = await failureOf(call);
      expect(isRedisUnavailable(error), String(error)).to.equal(true);
      expect(ms).to.be.below(REDIS_CALL_BUDGET_MS + 1_000);
    }
  });
});
