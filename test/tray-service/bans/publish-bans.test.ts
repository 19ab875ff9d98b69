import { expect } from 'chai';
import { createRedis, type RedisClient } from '../../../shared/redis/create-redis.ts';
import { banKeys } from '../../../tray-service/bans/ban-keys.ts';
import { banRank } from '../../../tray-service/domain/ban-change.ts';
import { publishAllBans, publishBans } from '../../../tray-service/bans/publish-bans.ts';
import { uniqueName } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';

const at = Date.parse('2026-11-20T11:00:00.000Z');

describe('publishBans (real Redis)', () => {
  let redis: RedisClient;
  let prefix: string;
  beforeEach(async () => {
    redis = createRedis(testStack().redisUrl);
    prefix = uniqueName('bans');
    await publishAllBans(redis, prefix, []);
  });
  afterEach(() => redis.disconnect());

  const banned = async () => (await redis.smembers(banKeys(prefix).banned)).sort();
  const version = async () => Number(await redis.get(banKeys(prefix).version));

  it('keeps the newest change whatever order the changes come in, bumping the version per change kept', async () => {
    const empty = await version();
    expect(
      await publishBans(redis, prefix, [{ userId: 'u-eve', banned: true, at: at + 60_000 }]),
    ).to.deep.equal({
      setLost: false,
      wentBack: false,
      version: empty + 1,
    });
    const first = await version();
    expect(first).to.equal(empty + 1);
    await publishBans(redis, prefix, [{ userId: 'u-eve', banned: false, at }]);
    expect(await banned()).to.deep.equal(['u-eve']);
    expect(await version()).to.equal(first);
    await publishBans(redis, prefix, [{ userId: 'u-eve', banned: false, at: at + 120_000 }]);
    expect(await banned()).to.deep.equal([]);
    expect(await version()).to.equal(first + 1);
  });

  // A failover to a replica that lagged: its count, one past the older version, comes back to
  // numbers the caller saw standing for another set.
  it('tells a set gone back by a count at or below the newest version the caller saw', async () => {
    const seen = (await version()) + 3;
    const changes = [
      { userId: 'u-hal', banned: true, at },
      { userId: 'u-ida', banned: true, at },
    ];
    expect(await publishBans(redis, prefix, changes, seen)).to.deep.include({ wentBack: true });
    const past = await version();
    expect(await publishBans(redis, prefix, [{ userId: 'u-jo', banned: true, at }], past)).to.deep.include({
      wentBack: false,
      version: past + 1,
    });
  });

  it('changes nothing on a republish of the same change', async () => {
    const change = { userId: 'u-fay', banned: true, at };
    await publishBans(redis, prefix, [change]);
    const first = await version();
    await publishBans(redis, prefix, [change]);
    expect(await banned()).to.deep.equal(['u-fay']);
    expect(await version()).to.equal(first);
  });

  it('ends at the newest change when many are published at once, on several connections', async () => {
    const connections = Array.from({ length: 4 }, () => createRedis(testStack().redisUrl));
    try {
      const changes = Array.from({ length: 40 }, (_, n) => ({
        userId: 'u-gus',
        banned: n % 2 === 1,
        at: at + ((n * 7919) % 40) * 1_000,
      }));
      const newest = changes.reduce((a, b) => (b.at > a.at ? b : a));
      // The newest is a ban: an empty set, where the test starts, would not pass for it.
      expect(newest.banned).to.equal(true);
      await Promise.all(
        changes.map((change, n) => publishBans(connections[n % connections.length]!, prefix, [change])),
      );
      expect(await banned()).to.deep.equal(['u-gus']);
      expect(Number(await redis.hget(banKeys(prefix).rank, 'u-gus'))).to.equal(banRank(newest));
    } finally {
      for (const connection of connections) connection.disconnect();
    }
  });

  describe('into a Redis that lost the set', () => {
    const keys = () => banKeys(prefix);
    beforeEach(async () => {
      await publishBans(redis, prefix, [{ userId: 'u-hal', banned: true, at }]);
      await redis.del(keys().rank, keys().banned, keys().version);
    });

    it('writes the change but creates no version, and says the set is lost', async () => {
      expect(await publishBans(redis, prefix, [{ userId: 'u-ida', banned: true, at }])).to.deep.equal({
        setLost: true,
        wentBack: false,
      });
      expect(await banned()).to.deep.equal(['u-ida']);
      expect(await redis.exists(keys().version)).to.equal(0);
      // An older change than the one written says so too.
      expect(
        await publishBans(redis, prefix, [{ userId: 'u-ida', banned: false, at: at - 1 }]),
      ).to.deep.equal({
        setLost: true,
        wentBack: false,
      });
    });

    it('gets its version back from the whole set, counted from the clock, not from 0', async () => {
      const before = Date.now();
      await publishAllBans(redis, prefix, [
        { userId: 'u-hal', banned: true, at },
        { userId: 'u-jo', banned: false, at },
      ]);
      expect(await banned()).to.deep.equal(['u-hal']);
      expect(await version()).to.be.within(before, Date.now());
      expect(
        (await publishBans(redis, prefix, [{ userId: 'u-jo', banned: true, at: at + 1 }])).setLost,
      ).to.equal(false);
    });
  });

  // A failover to a replica that lagged: the version is there, only older than one seen.
  describe('into a Redis gone back to an older set', () => {
    it('restores the stored bans and marks the set with a version above the newest seen', async () => {
      const older = await version();
      const { version: seen } = await publishBans(redis, prefix, [{ userId: 'u-kit', banned: true, at }]);
      expect(seen).to.equal(older + 1);
      await redis.hdel(banKeys(prefix).rank, 'u-kit');
      await redis.srem(banKeys(prefix).banned, 'u-kit');
      await redis.set(banKeys(prefix).version, String(older));
      const answered = await publishAllBans(redis, prefix, [{ userId: 'u-kit', banned: true, at }], seen);
      expect(await banned()).to.deep.equal(['u-kit']);
      expect(answered).to.equal(await version());
      expect(answered).to.be.above(older + 1);
    });

    it('leaves a version that did not go back as it is when nothing changed', async () => {
      const { version: seen } = await publishBans(redis, prefix, [{ userId: 'u-lin', banned: true, at }]);
      expect(await publishAllBans(redis, prefix, [{ userId: 'u-lin', banned: true, at }], seen)).to.equal(
        seen,
      );
      expect(await version()).to.equal(seen);
    });
  });
});
