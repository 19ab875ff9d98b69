import { expect } from 'chai';
import request from 'supertest';
import { createRedis, type RedisClient } from '../../../shared/redis/create-redis.ts';
import { useRefusableRedis } from '../../support/use-refusable-redis.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bearer, useTrayApi } from './support/api-harness.ts';

interface RedisCheck {
  ok: boolean;
  detail?: Record<string, unknown>;
}

/**
 * The tray API's /readyz on a Redis that answers PING but refuses writes: a primary demoted to a
 * replica (READONLY), one at maxmemory under noeviction (OOM), an ACL user without scripts
 * (NOPERM). Streams, tickets and the shared rate limits need writes; history, counts and marks do
 * not, and every instance shares that Redis: so the tray stays ready, degraded, and says why.
 * Answering 503 took every instance out of the load balancer at once, reads included.
 */
describe('tray API readiness while Redis refuses writes or is out of reach', function () {
  this.timeout(30_000);
  const api = useTrayApi();
  const refusable = useRefusableRedis();
  let redis: RedisClient;

  before(async () => {
    redis = createRedis(await refusable.userUrl('tray', 'tray-pw'));
  });
  after(() => redis.disconnect());

  const readiness = async () => {
    const res = await request(api.app({ redis })).get('/readyz');
    return { status: res.status, redis: (res.body as { checks: { redis: RedisCheck } }).checks.redis };
  };

  /**
   * /readyz answers 200 `degraded` with `refused` while `refuse` holds, and the user's history is
   * served; `ready` once `restore` ran.
   */
  async function degradedWhile(
    refuse: () => Promise<unknown>,
    restore: () => Promise<unknown>,
    code: string,
  ) {
    expect((await readiness()).status).to.equal(200);
    expect((await request(api.app({ redis })).get('/readyz')).body.status).to.equal('ready');
    await refuse();
    try {
      let answer: Awaited<ReturnType<typeof readiness>> | undefined;
      await waitFor(
        async () => (answer = await readiness()).redis.detail !== undefined,
        5_000,
        `/readyz to say ${code}`,
      );
      expect(answer?.status).to.equal(200);
      expect(answer?.redis).to.deep.equal({ ok: false, reason: 'failed', detail: { refused: code } });
      const app = api.app({ redis });
      expect((await request(app).get('/readyz')).body.status).to.equal('degraded');
      await request(app)
        .get('/notifications/v3/history')
        .set('Authorization', await bearer('u-degraded'))
        .expect(200);
    } finally {
      await restore();
    }
    await waitFor(
      async () => (await request(api.app({ redis })).get('/readyz')).body.status === 'ready',
      5_000,
      '/readyz to answer ready again',
    );
  }

  it('is ready, degraded, while the server is a read-only replica', async () => {
    await degradedWhile(refusable.demote, refusable.promote, 'READONLY');
  });

  it('is ready, degraded, while the server is out of memory under noeviction', async () => {
    await degradedWhile(
      () => refusable.admin.config('SET', 'maxmemory', '1'),
      () => refusable.admin.config('SET', 'maxmemory', '0'),
      'OOM',
    );
  });

  it('is ready, degraded, while its user may not run scripts', async () => {
    await degradedWhile(
      () => refusable.admin.call('ACL', 'SETUSER', 'tray', '-@scripting'),
      () => refusable.admin.call('ACL', 'SETUSER', 'tray', '+@scripting'),
      'NOPERM',
    );
  });

  it('is ready, degraded, while Redis is out of reach, and serves history and counts meanwhile', async () => {
    const unreachable = createRedis('redis://127.0.0.1:1');
    unreachable.on('error', () => undefined);
    try {
      const app = api.app({ redis: unreachable });
      const res = await request(app).get('/readyz').expect(200);
      expect(res.body.status).to.equal('degraded');
      expect(res.body.checks.redis.ok).to.equal(false);
      expect(res.body.checks.storage.ok).to.equal(true);
      const authorization = await bearer('u-no-redis');
      for (const path of ['/notifications/v3/history', '/notifications/v3']) {
        const asked = Date.now();
        await request(app).get(path).set('Authorization', authorization).expect(200);
        // The shared rate limits fall back to the instance's own without waiting on Redis: short of
        // the budget a call to Redis would wait (REDIS_CALL_BUDGET_MS, a second).
        expect(Date.now() - asked, path).to.be.below(900);
      }
    } finally {
      unreachable.disconnect();
    }
  });
});
