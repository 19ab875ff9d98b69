import { expect } from 'chai';
import request from 'supertest';
import { createRedis, type RedisClient } from '../../../shared/redis/create-redis.ts';
import { useRefusableRedis } from '../../support/use-refusable-redis.ts';
import { waitFor } from '../../support/wait-for.ts';
import { useTrayApi } from './support/api-harness.ts';

interface RedisCheck {
  ok: boolean;
  detail?: Record<string, unknown>;
}

/**
 * The tray API's /readyz on a Redis that answers PING but refuses writes: a primary demoted to a
 * replica (READONLY), one at maxmemory under noeviction (OOM), an ACL user without scripts
 * (NOPERM). The queue, rate limits and streams all need writes, so the tray is not ready then.
 */
describe('tray API readiness while Redis refuses writes', function () {
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

  /** /readyz answers 503 with `refused` while `refuse` holds, and 200 once `restore` ran. */
  async function notReadyWhile(
    refuse: () => Promise<unknown>,
    restore: () => Promise<unknown>,
    code: string,
  ) {
    expect((await readiness()).status).to.equal(200);
    await refuse();
    try {
      let answer: Awaited<ReturnType<typeof readiness>> | undefined;
      await waitFor(
        async () => (answer = await readiness()).redis.detail !== undefined,
        5_000,
        `/readyz to say ${code}`,
      );
      expect(answer?.status).to.equal(503);
      expect(answer?.redis).to.deep.equal({ ok: false, reason: 'failed', detail: { refused: code } });
    } finally {
      await restore();
    }
    await waitFor(async () => (await readiness()).status === 200, 5_000, '/readyz to answer 200 again');
  }

  it('is not ready while the server is a read-only replica', async () => {
    await notReadyWhile(refusable.demote, refusable.promote, 'READONLY');
  });

  it('is not ready while the server is out of memory under noeviction', async () => {
    await notReadyWhile(
      () => refusable.admin.config('SET', 'maxmemory', '1'),
      () => refusable.admin.config('SET', 'maxmemory', '0'),
      'OOM',
    );
  });

  it('is not ready while its user may not run scripts', async () => {
    await notReadyWhile(
      () => refusable.admin.call('ACL', 'SETUSER', 'tray', '-@scripting'),
      () => refusable.admin.call('ACL', 'SETUSER', 'tray', '+@scripting'),
      'NOPERM',
    );
  });
});
