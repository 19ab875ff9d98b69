import { expect } from 'chai';
import { retryFailedJobs } from '../../../../scripts/lib/replay/retry-failed-jobs.ts';
import { createWebhookQueue, type WebhookJobData } from '../../../../shared/queue/webhook-queue.ts';
import { useQueuePrefix } from '../../../support/suite-resources.ts';
import { testStack } from '../../../support/test-stack.ts';

const job = (id: string): WebhookJobData => ({
  dedupeKey: id,
  webhook: 'main',
  receivedAt: '2026-11-20T10:00:00.000Z',
  event: 'post.didCreate',
  data: {},
});

describe('retryFailedJobs (npm run replay -- failed)', function () {
  this.timeout(30_000);
  const prefix = useQueuePrefix();

  it('counts a job a worker holds (locked: another run moved it back and it is running) as skipped, not as an error', async () => {
    const queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    try {
      const failed = new Promise<void>((resolve) => queue.on('failed', () => resolve()));
      void queue.process(async () => {
        throw new Error('down');
      });
      await queue.add(job('held'), { jobId: 'held', attempts: 1 });
      await failed;
      // The lock a worker takes on a job it runs: bull refuses to retry a locked job.
      await queue.client.set(`${prefix}:${queue.name}:held:lock`, 'another-worker', 'PX', 30_000);
      const counts = await retryFailedJobs(queue, ['held'], () => undefined);
      expect(counts).to.deep.equal({ moved: 0, skipped: 1, errors: 0 });
    } finally {
      await queue.close();
    }
  });

  // bull's retry() leaves attemptsMade as it was: a dead letter replayed had its last attempt
  // spent already, and any failure sent it straight back to the failed set, with no backoff.
  it('gives a replayed job its attempts again', async () => {
    const queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    try {
      let runs = 0;
      const settled: string[] = [];
      queue.on('failed', () => settled.push('failed'));
      queue.on('completed', () => settled.push('completed'));
      void queue.process(async () => {
        runs += 1;
        // Fails both attempts, then once more after the replay, then succeeds.
        if (runs <= 3) throw new Error('not yet');
        return 'done';
      });
      await queue.add(job('again'), { jobId: 'again', attempts: 2, backoff: 10 });
      while (settled.length < 2) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await (await queue.getJob('again'))?.getState()).to.equal('failed');
      const counts = await retryFailedJobs(queue, ['again'], () => undefined);
      expect(counts).to.deep.equal({ moved: 1, skipped: 0, errors: 0 });
      const deadline = Date.now() + 5_000;
      while (!settled.includes('completed') && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(runs).to.equal(4);
      expect(await (await queue.getJob('again'))?.getState()).to.equal('completed');
    } finally {
      await queue.close();
    }
  });
});
