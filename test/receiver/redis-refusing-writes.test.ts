import { expect } from 'chai';
import { rmSync } from 'node:fs';
import request from 'supertest';
import { useQueuePrefix } from '../support/suite-resources.ts';
import { useRefusableRedis } from '../support/use-refusable-redis.ts';
import { waitFor } from '../support/wait-for.ts';
import { channelDidCreate, signedHeaders } from './support/signed-request.ts';
import { startTestReceiver, type TestReceiver } from './support/use-receiver.ts';

interface Readiness {
  status: number;
  /** The body's `status`: ready, degraded or unavailable. */
  state: string;
  redis: { ok: boolean; detail?: Record<string, unknown> };
}

async function readiness(receiver: TestReceiver): Promise<Readiness> {
  const res = await request(receiver.app).get('/readyz');
  return {
    status: res.status,
    state: (res.body as { status: string }).status,
    redis: (res.body as { checks: Record<string, Readiness['redis']> }).checks.redis!,
  };
}

async function deliver(receiver: TestReceiver, channelId: string): Promise<void> {
  const body = channelDidCreate(channelId);
  await request(receiver.app).post('/webhooks').set(signedHeaders(body)).send(body).expect(200);
}

/**
 * Delivers one event, which must go to the spool, then waits until /readyz says why Redis fails its
 * check (a check may first find the connection closed, while the refused writes keep dropping it),
 * and returns that answer.
 */
async function refusalReported(receiver: TestReceiver, channelId: string): Promise<Readiness> {
  await deliver(receiver, channelId);
  expect(receiver.spool.depth(), 'the event is spooled').to.be.above(0);
  let report: Readiness | undefined;
  await waitFor(
    async () => (report = await readiness(receiver)).redis.detail !== undefined,
    5_000,
    '/readyz to say why',
  );
  expect([report!.status, report!.state]).to.deep.equal([200, 'degraded']);
  expect(report!.redis.ok).to.equal(false);
  return report!;
}

/**
 * A Redis that answers PING but refuses writes: a primary demoted to a replica behind the same
 * address (READONLY), or one at maxmemory under noeviction (OOM). Every event is then spooled; the
 * receiver says it is degraded and why meanwhile (still ready: the spool takes the deliveries, and
 * every instance shares that Redis), and ready again once writes succeed.
 */
describe('receiver while Redis refuses writes', function () {
  this.timeout(60_000);
  const refusable = useRefusableRedis();
  let receiver: TestReceiver | undefined;
  const prefix = useQueuePrefix();
  afterEach(async () => {
    await receiver?.close();
    if (receiver) rmSync(receiver.spoolDir, { recursive: true, force: true });
    receiver = undefined;
  });

  it('is degraded while the server is a read-only replica, and ready again once it is a primary', async () => {
    receiver = await startTestReceiver(`${prefix}-ro`, { redisUrl: refusable.url, drainIntervalMs: 50 });
    const current = receiver;
    expect((await readiness(current)).state).to.equal('ready');
    await refusable.demote();
    try {
      await waitFor(
        async () => ((await refusable.admin.call('ROLE')) as string[])[0] === 'slave',
        5_000,
        'the demotion',
      );
      const report = await refusalReported(current, 'ro-1');
      expect(JSON.stringify(report.redis.detail)).to.match(/READONLY|replica/);
      expect(JSON.stringify(report.redis.detail)).not.to.include(refusable.url);
    } finally {
      await refusable.promote();
    }
    await waitFor(() => current.spool.depth() === 0, 10_000, 'the spool to drain');
    await waitFor(
      async () => (await readiness(current)).state === 'ready',
      5_000,
      '/readyz to answer ready again',
    );
  });

  it('is degraded while its user may write keys but not run scripts (NOPERM), and ready again once it may', async () => {
    // An ACL user the receiver connects as; then scripts, which every enqueue and drain runs, are
    // taken from it while plain writes stay allowed.
    const url = await refusable.userUrl('receiver', 'receiver-pw');
    receiver = await startTestReceiver(`${prefix}-noperm`, { redisUrl: url, drainIntervalMs: 50 });
    const current = receiver;
    expect((await readiness(current)).state).to.equal('ready');
    await refusable.admin.call('ACL', 'SETUSER', 'receiver', '-@scripting');
    try {
      const report = await refusalReported(current, 'noperm-1');
      expect(report.redis.detail).to.deep.include({ refused: 'NOPERM' });
      // Later checks still say so: a plain write succeeding is not the scripts succeeding.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const again = await readiness(current);
      expect(again.state).to.equal('degraded');
      expect(again.redis.detail).to.deep.include({ refused: 'NOPERM' });
    } finally {
      await refusable.admin.call('ACL', 'SETUSER', 'receiver', '+@scripting');
    }
    await waitFor(() => current.spool.depth() === 0, 10_000, 'the spool to drain');
    await waitFor(
      async () => (await readiness(current)).state === 'ready',
      5_000,
      '/readyz to answer ready again',
    );
    await refusable.admin.call('ACL', 'DELUSER', 'receiver');
  });

  it('is degraded while the server is out of memory under noeviction, and ready again once writes succeed', async () => {
    receiver = await startTestReceiver(`${prefix}-oom`, { redisUrl: refusable.url, drainIntervalMs: 50 });
    const current = receiver;
    expect((await readiness(current)).state).to.equal('ready');
    await refusable.admin.config('SET', 'maxmemory', '1');
    try {
      const report = await refusalReported(current, 'oom-1');
      expect(JSON.stringify(report.redis.detail)).to.include('OOM');
      // A drain pass reads the oldest segment whole (up to 64 MiB) before its first enqueue: while
      // Redis refuses every write, the passes (every 50 ms here) ask with a small probe write first.
      const spool = current.spool;
      const drain = spool.drain.bind(spool);
      let reads = 0;
      spool.drain = (...args) => {
        reads += 1;
        return drain(...args);
      };
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(reads, 'segment reads in 1 s of refused writes').to.be.at.most(1);
    } finally {
      await refusable.admin.config('SET', 'maxmemory', '0');
    }
    await waitFor(() => current.spool.depth() === 0, 10_000, 'the spool to drain');
    await waitFor(
      async () => (await readiness(current)).state === 'ready',
      5_000,
      '/readyz to answer ready again',
    );
  });
});
