import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Bull from 'bull';
import { freePort, startRedis, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import { createBullQueue } from '../../../shared/queue/create-bull-queue.ts';
import { waitFor } from '../../support/wait-for.ts';

// The worker pauses its queue locally (without waiting for the jobs it holds) when the storage
// stops answering. When Redis is gone too, bull's reconnect of its blocking connection fails and
// ioredis ends that connection for good; bull never makes another.
describe('createBullQueue: the blocking connection after a local pause while Redis is down', function () {
  this.timeout(60_000);
  let dir: string;
  let port: number;
  let redis: LocalServer | undefined;
  let queue: Bull.Queue<{ n: number }> | undefined;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bull-queue-'));
    port = await freePort();
    redis = await startRedis({ dir, port, persistent: true });
  });
  afterEach(async () => {
    await queue?.close(true).catch(() => undefined);
    await redis?.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('is connected again, so jobs queued after the outage are taken once the queue resumes', async () => {
    queue = createBullQueue<{ n: number }>('blocking', { redis: redis!.url, prefix: 'bq' });
    queue.on('error', () => undefined);
    const done: number[] = [];
    void queue.process(async (job) => void done.push(job.data.n));
    await queue.add({ n: 1 });
    await waitFor(() => done.includes(1), 10_000, 'the first job');
    // Drained: the worker now waits on the blocking connection.
    await redis!.stop('SIGKILL');
    await queue.pause(true, true).catch(() => undefined);
    const blocking = (queue as unknown as { bclient: { status: string } }).bclient;
    await waitFor(() => blocking.status !== 'ready', 5_000, 'the blocking connection to go');
    redis = await startRedis({ dir, port, persistent: true });
    await queue.resume(true);
    await queue.add({ n: 2 });
    await waitFor(() => done.includes(2), 20_000, 'the job queued after the outage').catch(() => undefined);
    expect(done).to.deep.equal([1, 2]);
  });
});
