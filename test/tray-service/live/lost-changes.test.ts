import { expect } from 'chai';
import { createRedis, type RedisClient } from '../../../shared/redis/create-redis.ts';
import { DAY_MS } from '../../../shared/time/durations.ts';
import { createLostChanges } from '../../../tray-service/live/lost-changes.ts';
import { uniqueName } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';

describe('createLostChanges', () => {
  let redis: RedisClient;
  before(() => {
    redis = createRedis(testStack().redisUrl);
  });
  after(() => {
    redis.disconnect();
  });
  const NOW = 1_800_000_000_000;

  it('keeps each resync apart, with the earliest change it made up for, oldest first', async () => {
    const lost = createLostChanges(redis, uniqueName('lost'));
    await lost.record('u', NOW - 5_000, NOW);
    await lost.record('u', NOW + 1_000, NOW + 3_000);
    await lost.record('u', NOW - 9_000, NOW + 2_000);
    expect(await lost.of('u')).to.deep.equal([
      { since: NOW - 5_000, at: NOW },
      { since: NOW - 9_000, at: NOW + 2_000 },
      { since: NOW + 1_000, at: NOW + 3_000 },
    ]);
    expect(await lost.of('u-other')).to.deep.equal([]);
  });

  it('forgets a resync a day after it went out', async () => {
    const lost = createLostChanges(redis, uniqueName('lost'));
    await lost.record('u', NOW - 60_000, NOW);
    await lost.record('u', NOW + DAY_MS - 1_000, NOW + DAY_MS + 1);
    expect(await lost.of('u')).to.deep.equal([{ since: NOW + DAY_MS - 1_000, at: NOW + DAY_MS + 1 }]);
  });

  it('past 32 in a day, makes the two oldest one (the earlier since, the later at): records may come again, never go missing', async () => {
    const lost = createLostChanges(redis, uniqueName('lost'));
    // The oldest holds the earliest since: the merge must keep it, not the second one's.
    for (let k = 0; k < 33; k += 1)
      await lost.record('u', NOW + k * 1_000 - (k === 0 ? 5_000 : 500), NOW + k * 1_000);
    const kept = await lost.of('u');
    expect(kept).to.have.length(32);
    expect(kept[0]).to.deep.equal({ since: NOW - 5_000, at: NOW + 1_000 });
    expect(kept[1]).to.deep.equal({ since: NOW + 2_000 - 500, at: NOW + 2_000 });
  });

  it('reads the one pair an earlier version kept, for the day it lives on after an upgrade', async () => {
    const prefix = uniqueName('lost');
    await redis.hset(`${prefix}:lost:u`, { since: String(NOW - 1_000), at: String(NOW) });
    const lost = createLostChanges(redis, prefix);
    await lost.record('u', NOW + 5_000, NOW + 6_000);
    expect(await lost.of('u')).to.deep.equal([
      { since: NOW - 1_000, at: NOW },
      { since: NOW + 5_000, at: NOW + 6_000 },
    ]);
  });
});
