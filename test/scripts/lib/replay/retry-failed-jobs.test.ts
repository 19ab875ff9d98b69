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
});
