import { expect } from 'chai';
import { createMetricsRegistry } from '../../../shared/http/metrics-router.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createWebhookQueue } from '../../../shared/queue/webhook-queue.ts';
import { startWorker, type RunningWorker } from '../../../tray-service/worker/start-worker.ts';
import { testStack } from '../../support/test-stack.ts';
import { commentEvent, membershipEvent, minute, postEvent } from './event-builder.ts';
import { useWorker, type WorkerHarness } from './worker-harness.ts';

const busyPost = (postId: string, count: number) =>
  Array.from({ length: count }, (_, index) => `u-c${String(index).padStart(3, '0')}`).map((author, index) =>
    commentEvent({ postId, commentId: `cm-${postId}-${index}`, author, createdAt: minute(index / 10) }),
  );

async function expectAllCommenters(worker: WorkerHarness, postId: string, count: number): Promise<void> {
  const record = await worker.record(`comment_${postId}_u-ana`);
  expect(record?.actorsCount).to.equal(count);
  const latest = [count - 1, count - 2, count - 3].map((index) => `C${String(index).padStart(3, '0')}`);
  expect(record?.actors.map((actor) => actor.name)).to.deep.equal(latest);
  expect(record?.lastActionId).to.equal(`cm-${postId}-${count - 1}`);
}

// docs/storage.md: several workers update the same record at once; nothing may be lost.
describe('tray worker with concurrency 8', () => {
  const worker = useWorker({ concurrency: 8 });

  describe('200 distinct commenters on one post, queued at once', () => {
    it('gives actorsCount 200 and the 3 latest names', async function () {
      this.timeout(300_000);
      await worker.deliverAll(busyPost('p-busy', 200));
      await expectAllCommenters(worker, 'p-busy', 200);
    });
  });

  describe('with a second worker instance consuming the same queue (compare-and-set across processes)', () => {
    let second: RunningWorker | undefined;
    /** Jobs the second worker completed: the two did share the work. */
    let secondCompleted = 0;
    before(async () => {
      const queue = createWebhookQueue({ redis: testStack().redisUrl, prefix: worker.prefix });
      queue.on('completed', () => (secondCompleted += 1));
      second = await startWorker({
        queue,
        networkId: 'default',
        storage: await worker.another(),
        logger: createLogger({ name: 'test', level: 'silent' }),
        registry: createMetricsRegistry('test2', false),
        concurrency: 8,
        purgeIntervalMs: 0,
      });
    });
    after(async () => second?.close());

    it('loses no commenter either (100 at once)', async function () {
      this.timeout(300_000);
      const before = secondCompleted;
      await worker.deliverAll(busyPost('p-busy2', 100));
      await expectAllCommenters(worker, 'p-busy2', 100);
      expect(secondCompleted - before, 'jobs the second worker ran').to.be.above(0);
    });

    it('loses no actor when posts fan out to the same members at once', async function () {
      this.timeout(300_000);
      const members = Array.from({ length: 20 }, (_, index) => `u-m${index}`);
      await worker.deliver(membershipEvent('join', members, 'c-race'), { receivedAt: minute(-5) });
      await worker.deliverAll(
        Array.from({ length: 10 }, (_, index) =>
          postEvent({
            postId: `p-race-${index}`,
            author: `u-poster${index}`,
            communityId: 'c-race',
            createdAt: minute(index),
          }),
        ),
      );
      const records = await Promise.all(members.map((userId) => worker.record(`post_c-race_${userId}`)));
      expect(records.map((record) => record?.actorsCount)).to.deep.equal(members.map(() => 10));
    });
  });
});
