import { expect } from 'chai';
import { Redis } from 'ioredis';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { startRedis, type LocalServer } from '../../scripts/lib/local-servers.ts';
import { useQueuePrefix } from '../support/suite-resources.ts';
import { waitFor } from '../support/wait-for.ts';
import { channelDidCreate, signedHeaders } from './support/signed-request.ts';
import { startTestReceiver, type TestReceiver } from './support/use-receiver.ts';

interface Readiness {
  status: number;
  redis: { ok: boolean; detail?: Record<string, unknown> };
}

async function readiness(receiver: TestReceiver): Promise<Readiness> {
  const res = await request(receiver.app).get('/readyz');
  return {
    status: res.status,
    redis: (res.body as { checks: Record<string, Readiness['redis']> }).checks.redis!,
  };
}

async function deliver(receiver: TestReceiver, channelId: string): Promise<void> {
  const body = channelDidCreate(channelId);
  await request(receiver.app).post('/webhooks').set(signedHeaders(body)).send(body).expect(200);
}

/**
 * Delivers one event, which must go to the spool, then waits until /readyz says why Redis is not
 * ready (a check may first find the connection closed, while the refused writes keep dropping it),
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
  expect(report!.status).to.equal(503);
  expect(report!.redis.ok).to.equal(false);
  return report!;
}

/**
 * A Redis that answers PING but refuses writes: a primary demoted to a replica behind the same
 * address (READONLY), or one at maxmemory under noeviction (OOM). Every event is then spooled; the
 * receiver must not call itself ready meanwhile, and must become ready again once writes succeed.
 */
describe('receiver while Redis refuses writes', function () {
  this.timeout(60_000);
  let dir: string;
  let primary: LocalServer;
  let server: LocalServer;
  let admin: Redis;
  let receiver: TestReceiver | undefined;
  const prefix = useQueuePrefix();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'refusing-redis-'));
    [primary, server] = await Promise.all([
      startRedis({ dir: join(dir, 'primary') }),
      startRedis({ dir: join(dir, 'server') }),
    ]);
    admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
  });
  afterEach(async () => {
    await receiver?.close();
    if (receiver) rmSync(receiver.spoolDir, { recursive: true, force: true });
    receiver = undefined;
  });
  after(async () => {
    admin.disconnect();
    await Promise.all([primary.stop(), server.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('is not ready while the server is a read-only replica, and ready again once it is a primary', async () => {
    receiver = await startTestReceiver(`${prefix}-ro`, { redisUrl: server.url, drainIntervalMs: 50 });
    const current = receiver;
    expect((await readiness(current)).status).to.equal(200);
    await admin.call('REPLICAOF', '127.0.0.1', String(new URL(primary.url).port));
    try {
      await waitFor(
        async () => ((await admin.call('ROLE')) as string[])[0] === 'slave',
        5_000,
        'the demotion',
      );
      const report = await refusalReported(current, 'ro-1');
      expect(JSON.stringify(report.redis.detail)).to.match(/READONLY|replica/);
      expect(JSON.stringify(report.redis.detail)).not.to.include(server.url);
    } finally {
      await admin.call('REPLICAOF', 'NO', 'ONE');
    }
    await waitFor(() => current.spool.depth() === 0, 10_000, 'the spool to drain');
    await waitFor(
      async () => (await readiness(current)).status === 200,
      5_000,
      '/readyz to answer 200 again',
    );
  });

  it('is not ready while its user may write keys but not run scripts (NOPERM), and ready again once it may', async () => {
    // An ACL user the receiver connects as; then scripts, which every enqueue and drain runs, are
    // taken from it while plain writes stay allowed.
    await admin.call('ACL', 'SETUSER', 'receiver', 'on', '>receiver-pw', '~*', '&*', '+@all');
    const url = new URL(server.url);
    url.username = 'receiver';
    url.password = 'receiver-pw';
    receiver = await startTestReceiver(`${prefix}-noperm`, { redisUrl: url.href, drainIntervalMs: 50 });
    const current = receiver;
    expect((await readiness(current)).status).to.equal(200);
    await admin.call('ACL', 'SETUSER', 'receiver', '-@scripting');
    try {
      const report = await refusalReported(current, 'noperm-1');
      expect(report.redis.detail).to.deep.include({ refused: 'NOPERM' });
      // Later checks still say so: a plain write succeeding is not the scripts succeeding.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const again = await readiness(current);
      expect(again.status).to.equal(503);
      expect(again.redis.detail).to.deep.include({ refused: 'NOPERM' });
    } finally {
      await admin.call('ACL', 'SETUSER', 'receiver', '+@scripting');
    }
    await waitFor(() => current.spool.depth() === 0, 10_000, 'the spool to drain');
    await waitFor(
      async () => (await readiness(current)).status === 200,
      5_000,
      '/readyz to answer 200 again',
    );
    await admin.call('ACL', 'DELUSER', 'receiver');
  });

  it('is not ready while the server is out of memory under noeviction, and ready again once writes succeed', async () => {
    receiver = await startTestReceiver(`${prefix}-oom`, { redisUrl: server.url, drainIntervalMs: 50 });
    const current = receiver;
    expect((await readiness(current)).status).to.equal(200);
    await admin.config('SET', 'maxmemory', '1');
    try {
      const report = await refusalReported(current, 'oom-1');
      expect(JSON.stringify(report.redis.detail)).to.include('OOM');
    } finally {
      await admin.config('SET', 'maxmemory', '0');
    }
    await waitFor(() => current.spool.depth() === 0, 10_000, 'the spool to drain');
    await waitFor(
      async () => (await readiness(current)).status === 200,
      5_000,
      '/readyz to answer 200 again',
    );
  });
});
