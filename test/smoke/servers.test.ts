import { expect } from 'chai';
import { createWebhookQueue, type WebhookJobData } from '../../shared/queue/webhook-queue.ts';
import { useMongo, useQueuePrefix } from '../support/suite-resources.ts';
import { testStack } from '../support/test-stack.ts';

describe('the started servers', () => {
  describe('MongoDB-compatible server', () => {
    const mongo = useMongo();

    it('writes and reads documents through the official driver', async () => {
      const things = mongo.db.collection<{ _id: string; n: number; tags: string[] }>('things');
      await things.insertMany([
        { _id: 'a', n: 1, tags: ['x'] },
        { _id: 'b', n: 2, tags: ['y'] },
      ]);
      await things.updateOne({ _id: 'a' }, { $inc: { n: 10 }, $addToSet: { tags: 'z' } });
      const found = await things.find({}).sort({ n: -1 }).toArray();
      expect(found).to.deep.equal([
        { _id: 'a', n: 11, tags: ['x', 'z'] },
        { _id: 'b', n: 2, tags: ['y'] },
      ]);
    });
  });

  describe('Redis with bull', () => {
    const prefix = useQueuePrefix();

    it('round-trips a job from producer to consumer', async () => {
      const producer = createWebhookQueue({ redis: testStack().redisUrl, prefix });
      const consumer = createWebhookQueue({ redis: testStack().redisUrl, prefix });
      try {
        const received = new Promise<WebhookJobData>((resolve) => {
          void consumer.process(async (job) => resolve(job.data));
        });
        const job: WebhookJobData = {
          dedupeKey: 'ab'.repeat(32),
          webhook: 'default',
          receivedAt: new Date().toISOString(),
          event: 'follow.didCreate',
          data: { from: 'u-1', to: 'u-2' },
        };
        await producer.add(job, { jobId: job.dedupeKey });
        expect(await received).to.deep.equal(job);
      } finally {
        await Promise.all([producer.close(), consumer.close()]);
      }
    });
  });
});
