import { expect } from 'chai';
import { Redis } from 'ioredis';
import {
  commandStatsDelta,
  parseCommandStats,
  redisCommandStats,
} from '../../../scripts/lib/redis-command-stats.ts';
import { testStack } from '../../support/test-stack.ts';

describe("Redis's per-command figures (scripts/lib/redis-command-stats.ts)", () => {
  it('reads calls and microseconds per command from INFO commandstats', () => {
    const info = [
      '# Commandstats',
      'cmdstat_evalsha:calls=10,usec=2000,usec_per_call=200.00,rejected_calls=0,failed_calls=0',
      'cmdstat_hset:calls=500,usec=1100,usec_per_call=2.20,rejected_calls=0,failed_calls=0',
      '',
    ].join('\r\n');
    expect([...parseCommandStats(info)]).to.deep.equal([
      ['evalsha', { calls: 10, usec: 2000 }],
      ['hset', { calls: 500, usec: 1100 }],
    ]);
  });

  it('keeps, between two readings, only the commands called in between', () => {
    const before = new Map([
      ['hset', { calls: 5, usec: 10 }],
      ['info', { calls: 1, usec: 3 }],
    ]);
    const after = new Map([
      ['hset', { calls: 8, usec: 19 }],
      ['info', { calls: 1, usec: 3 }],
      ['lpush', { calls: 2, usec: 1 }],
    ]);
    expect([...commandStatsDelta(before, after)]).to.deep.equal([
      ['hset', { calls: 3, usec: 9 }],
      ['lpush', { calls: 2, usec: 1 }],
    ]);
  });

  it("counts a live server's commands, those a script runs included", async () => {
    const { redisUrl } = testStack();
    const client = new Redis(redisUrl);
    try {
      const before = await redisCommandStats(redisUrl);
      await client.eval("redis.call('SET', KEYS[1], '1', 'EX', 60) return 1", 1, 'command-stats-test');
      const delta = commandStatsDelta(before, await redisCommandStats(redisUrl));
      expect(delta.get('eval')?.calls).to.equal(1);
      expect(delta.get('set')?.calls).to.be.at.least(1);
    } finally {
      client.disconnect();
    }
  });
});
