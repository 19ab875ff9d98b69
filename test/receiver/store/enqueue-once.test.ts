import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { createReceiverQueue, type ReceiverQueue } from '../../../receiver/store/create-receiver-queue.ts';
import { dedupeMarkKey, enqueueOnce, type EnqueueTarget } from '../../../receiver/store/enqueue-once.ts';
import type { WebhookJobData } from '../../../shared/queue/webhook-queue.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';

const job = (key: string): WebhookJobData => ({
  dedupeKey: key,
  webhook: 'default',
  receivedAt: '2026-11-21T00:00:00.000Z',
  event: 'post.didCreate',
  data: {},
});

describe('enqueueOnce', () => {
  const prefix = useQueuePrefix();
  let receiverQueue: ReceiverQueue;
  let target: EnqueueTarget;
  let redis: Redis;
  before(async () => {
    receiverQueue = createReceiverQueue(testStack().redisUrl, prefix);
    redis = receiverQueue.client;
    await new Promise((resolve) => redis.once('ready', resolve));
    target = { queue: receiverQueue.queue, redis, markPrefix: prefix, dedupeSeconds: 60 };
  });
  after(() => receiverQueue.close());

  it('queues an event once and reports the second add as a duplicate', async () => {
    expect(await enqueueOnce(target, job('a1'))).to.equal('queued');
    expect(await enqueueOnce(target, job('a1'))).to.equal('duplicate');
    expect(await receiverQueue.queue.getWaitingCount()).to.equal(1);
  });

  it('writes the dedupe mark with the configured expiry', async () => {
    await enqueueOnce(target, job('a2'));
    const ttl = await redis.ttl(dedupeMarkKey(prefix, 'a2'));
    expect(ttl).to.be.within(1, 60);
  });

  describe('after a crash between the add and the mark', () => {
    it('adding the event again keeps one job (the job id makes the add a no-op)', async () => {
      await enqueueOnce(target, job('a3'));
      await redis.del(dedupeMarkKey(prefix, 'a3'));
      const before = await receiverQueue.queue.getWaitingCount();
      expect(await enqueueOnce(target, job('a3'))).to.equal('queued');
      expect(await receiverQueue.queue.getWaitingCount()).to.equal(before);
    });
  });

  describe('when two identical deliveries race', () => {
    it('keeps one job', async () => {
      const before = await receiverQueue.queue.getWaitingCount();
      await Promise.all([enqueueOnce(target, job('a4')), enqueueOnce(target, job('a4'))]);
      expect(await receiverQueue.queue.getWaitingCount()).to.equal(before + 1);
    });
  });
});
