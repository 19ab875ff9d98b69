import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { startRedis } from '../../../../scripts/lib/local-servers.ts';
import { createLogger } from '../../../../shared/logging/create-logger.ts';
import { createRedis, type RedisClient } from '../../../../shared/redis/create-redis.ts';
import { createBanCache, startBanCache } from '../../../../tray-service/http/auth/ban-cache.ts';
import { banKeys } from '../../../../tray-service/bans/ban-keys.ts';
import { publishAllBans, publishBans } from '../../../../tray-service/bans/publish-bans.ts';
import { uniqueName } from '../../../support/suite-resources.ts';
import { testStack } from '../../../support/test-stack.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const at = Date.parse('2026-11-20T11:00:00.000Z');

describe('the API ban cache (real Redis)', () => {
  let redis: RedisClient;
  let prefix: string;
  beforeEach(async () => {
    redis = createRedis(testStack().redisUrl);
    prefix = uniqueName('bans');
    // As a worker does when it starts: the whole stored set (none yet), then changes one by one.
    await publishAllBans(redis, prefix, []);
  });
  afterEach(() => redis.disconnect());

  it('knows the published bans as soon as it has started', async () => {
    await publishBans(redis, prefix, [{ userId: 'u-eve', banned: true, at }]);
    const cache = await startBanCache(redis, { prefix, refreshMs: 60_000, logger });
    expect(cache.isBanned('u-eve')).to.equal(true);
    expect(cache.isBanned('u-fay')).to.equal(false);
    cache.stop();
  });

  it('reloads the set only when the published version moved', async () => {
    const cache = createBanCache(redis, { prefix, refreshMs: 60_000, logger });
    await cache.refresh();
    // Written without bumping the version: an instance does not reload, which is what keeps an
    // idle ban list at one GET per interval.
    await redis.sadd(banKeys(prefix).banned, 'u-gus');
    await cache.refresh();
    expect(cache.isBanned('u-gus')).to.equal(false);
    await publishBans(redis, prefix, [{ userId: 'u-hal', banned: true, at }]);
    await cache.refresh();
    expect(cache.isBanned('u-hal')).to.equal(true);
    expect(cache.isBanned('u-gus')).to.equal(true);
  });

  // A Redis restarted without its data, or a replica promoted without the set: the bans are
  // still stored, and the worker publishes them all again (publishAllBans).
  it('keeps the last loaded set when the published one is gone from Redis, then loads it once published again', async () => {
    const lines: string[] = [];
    const recorded = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    await publishBans(redis, prefix, [{ userId: 'u-kay', banned: true, at }]);
    const cache = createBanCache(redis, { prefix, refreshMs: 60_000, logger: recorded });
    await cache.refresh();
    const keys = banKeys(prefix);
    await redis.del(keys.rank, keys.banned, keys.version);
    await cache.refresh();
    await cache.refresh();
    expect(cache.isBanned('u-kay')).to.equal(true);
    expect(lines.filter((line) => line.includes('gone from Redis'))).to.have.lengthOf(1);
    // A change published before the whole set: it says the set is lost, and no instance loads a
    // set of that change alone (every earlier ban lifted).
    expect(await publishBans(redis, prefix, [{ userId: 'u-lou', banned: true, at }])).to.deep.equal({
      setLost: true,
      wentBack: false,
    });
    await cache.refresh();
    expect(cache.isBanned('u-kay')).to.equal(true);
    expect(cache.isBanned('u-lou')).to.equal(false);
    // Published again from the store, without the ban lifted meanwhile: the new set loads.
    await publishAllBans(redis, prefix, [
      { userId: 'u-kay', banned: false, at: at + 1 },
      { userId: 'u-lou', banned: true, at },
    ]);
    await cache.refresh();
    expect(cache.isBanned('u-kay')).to.equal(false);
    expect(cache.isBanned('u-lou')).to.equal(true);
  });

  // The version and the set were two reads: a Redis that lost its data between them (a failover
  // to a replica without the keys, a restart) answered the set empty, which was loaded under the
  // version read before, every ban lifted; the next refresh found the version gone and kept it.
  it('keeps the last loaded set when the published one is lost between reading its version and its members', async () => {
    await publishBans(redis, prefix, [{ userId: 'u-eve', banned: true, at }]);
    const keys = banKeys(prefix);
    let loseAfterVersion = false;
    const losing = new Proxy(redis, {
      get(target, prop) {
        if (prop === 'get')
          return async (key: string) => {
            const value = await target.get(key);
            if (loseAfterVersion && key === keys.version)
              await redis.del(keys.rank, keys.banned, keys.version);
            return value;
          };
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const cache = createBanCache(losing, { prefix, refreshMs: 60_000, logger });
    await cache.refresh();
    expect(cache.isBanned('u-eve')).to.equal(true);
    // A change, so the next refresh loads the set again; Redis loses it just after the version.
    await publishBans(redis, prefix, [{ userId: 'u-fay', banned: true, at }]);
    loseAfterVersion = true;
    await cache.refresh();
    loseAfterVersion = false;
    await cache.refresh();
    expect(cache.isBanned('u-eve')).to.equal(true);
  });

  // A republish takes the clock's milliseconds as its version: a set published a millisecond
  // after the one an instance loaded can end on that very number (seen once in CI).
  it('loads the set published after one went missing even when it carries the version last loaded', async () => {
    const keys = banKeys(prefix);
    await publishBans(redis, prefix, [{ userId: 'u-ola', banned: true, at }]);
    const cache = createBanCache(redis, { prefix, refreshMs: 60_000, logger });
    await cache.refresh();
    const loaded = await redis.get(keys.version);
    await redis.del(keys.rank, keys.banned, keys.version);
    await cache.refresh();
    // The stored set, published again: Ola's ban lifted, Pam banned, the same version number.
    await redis.sadd(keys.banned, 'u-pam');
    await redis.set(keys.version, String(loaded));
    await cache.refresh();
    expect(cache.isBanned('u-ola')).to.equal(false);
    expect(cache.isBanned('u-pam')).to.equal(true);
  });

  it('loads the set published again even where a counter from 0 would end on the number it last loaded', async () => {
    const keys = banKeys(prefix);
    // As a publisher counting from 0 left it: one change, version 1.
    await redis.sadd(keys.banned, 'u-max');
    await redis.set(keys.version, '1');
    const cache = createBanCache(redis, { prefix, refreshMs: 60_000, logger });
    await cache.refresh();
    expect(cache.isBanned('u-max')).to.equal(true);
    await redis.del(keys.rank, keys.banned, keys.version);
    // The set published into the emptied Redis: counted from 0, it would end at 1 again.
    await publishAllBans(redis, prefix, [{ userId: 'u-ned', banned: true, at }]);
    await cache.refresh();
    expect(cache.isBanned('u-ned')).to.equal(true);
    expect(cache.isBanned('u-max')).to.equal(false);
  });

  // A Redis that lost the set gets changes again before the whole republish: an instance started
  // then, with no set loaded yet, read the set of those changes alone, every earlier ban lifted,
  // until the republish (which waits on a storage that may be down).
  it('started while Redis has lost the set, reads the stored bans instead, until the set is published again', async () => {
    const keys = banKeys(prefix);
    await publishBans(redis, prefix, [{ userId: 'u-kay', banned: true, at }]);
    await redis.del(keys.rank, keys.banned, keys.version);
    await publishBans(redis, prefix, [{ userId: 'u-lou', banned: true, at }]);
    const stored = [
      { userId: 'u-kay', banned: true, at },
      { userId: 'u-lou', banned: true, at },
      { userId: 'u-mo', banned: false, at },
    ];
    const cache = createBanCache(redis, { prefix, refreshMs: 60_000, logger, stored: async () => stored });
    await cache.refresh();
    expect(['u-kay', 'u-lou', 'u-mo'].map((user) => cache.isBanned(user))).to.deep.equal([true, true, false]);
    await cache.refresh();
    expect(cache.isBanned('u-kay'), 'still, while the set is not published again').to.equal(true);
    await publishAllBans(redis, prefix, [
      { userId: 'u-kay', banned: false, at: at + 1 },
      { userId: 'u-lou', banned: true, at },
    ]);
    await cache.refresh();
    expect(['u-kay', 'u-lou'].map((user) => cache.isBanned(user))).to.deep.equal([false, true]);
  });

  // The republished set's read failed once: the flag saying "load whatever the number" was already
  // cleared, and a republish that landed on the version last loaded was then never loaded.
  it('loads the republished set on the next refresh when its first read failed', async () => {
    const keys = banKeys(prefix);
    await publishBans(redis, prefix, [{ userId: 'u-ola', banned: true, at }]);
    const cache = createBanCache(redis, { prefix, refreshMs: 60_000, logger });
    await cache.refresh();
    const loaded = String(await redis.get(keys.version));
    await redis.del(keys.rank, keys.banned, keys.version);
    await cache.refresh();
    // Republished on the very number last loaded, its set unreadable for one read (wrong type).
    await redis.set(keys.banned, 'not a set');
    await redis.set(keys.version, loaded);
    await expect(cache.refresh()).to.be.rejected;
    await redis.del(keys.banned);
    await redis.sadd(keys.banned, 'u-pam');
    await cache.refresh();
    expect(cache.isBanned('u-pam')).to.equal(true);
    expect(cache.isBanned('u-ola')).to.equal(false);
  });

  it('sees a change on its own within the refresh interval', async () => {
    const cache = await startBanCache(redis, { prefix, refreshMs: 100, logger });
    try {
      await publishBans(redis, prefix, [{ userId: 'u-ivy', banned: true, at }]);
      const started = Date.now();
      while (!cache.isBanned('u-ivy') && Date.now() - started < 2_000) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(cache.isBanned('u-ivy')).to.equal(true);
      // One interval and its read, with room for a busy machine: short of a ten times longer one.
      expect(Date.now() - started, 'ms until it saw the change').to.be.below(950);
    } finally {
      cache.stop();
    }
  });

  it('keeps enforcing the last loaded set when Redis cannot be reached', async () => {
    await publishBans(redis, prefix, [{ userId: 'u-jon', banned: true, at }]);
    const own = createRedis(testStack().redisUrl);
    const cache = await startBanCache(own, { prefix, refreshMs: 60_000, logger });
    own.disconnect();
    await expect(cache.refresh()).to.be.rejected;
    expect(cache.isBanned('u-jon')).to.equal(true);
    cache.stop();
  });

  it('keeps refreshing while Redis hangs (a read that never answers ends after its bound)', async function () {
    this.timeout(30_000);
    const dir = mkdtempSync(join(tmpdir(), 'ban-hang-'));
    const server = await startRedis({ dir });
    const own = createRedis(server.url);
    own.on('error', () => undefined);
    const warnings: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });
    await publishAllBans(own, prefix, []);
    const cache = await startBanCache(own, { prefix, refreshMs: 50, logger });
    try {
      // Stopped, not closed: the connection stays open and the GET waits for an answer.
      server.process.kill('SIGSTOP');
      const started = Date.now();
      while (warnings.length === 0 && Date.now() - started < 10_000) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(warnings.join(''), 'a refresh that failed within its bound').to.include(
        'ban list refresh failed',
      );
      server.process.kill('SIGCONT');
      await publishBans(own, prefix, [{ userId: 'u-kim', banned: true, at }]);
      const resumed = Date.now();
      while (!cache.isBanned('u-kim') && Date.now() - resumed < 5_000) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(cache.isBanned('u-kim'), 'the loop still runs after the hang').to.equal(true);
    } finally {
      server.process.kill('SIGCONT');
      cache.stop();
      own.disconnect();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
