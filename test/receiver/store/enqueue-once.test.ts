import type Bull from 'bull';
import { expect } from 'chai';
import type { RedisClient } from '../../../shared/redis/create-redis.ts';
import { createReceiverQueue, type ReceiverQueue } from '../../../receiver/store/create-receiver-queue.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  dedupeMarkKey,
  enqueueMany,
  enqueueOnce as enqueueDecoded,
  ReplicaFence,
  type EnqueueTarget,
} from '../../../receiver/store/enqueue-once.ts';
import { startRedis, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import {
  createWebhookQueue,
  encodeWebhookJob,
  WEBHOOK_QUEUE_NAME,
  webhookJobOptions,
  type WebhookJobData,
} from '../../../shared/queue/webhook-queue.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';

const job = (key: string): WebhookJobData => ({
  dedupeKey: key,
  webhook: 'default',
  receivedAt: '2026-11-21T00:00:00.000Z',
  event: 'post.didCreate',
  data: {},
});

const enqueueOnce = (target: EnqueueTarget, data: WebhookJobData) =>
  enqueueDecoded(target, encodeWebhookJob(data));

describe('enqueueOnce', () => {
  const prefix = useQueuePrefix();
  let receiverQueue: ReceiverQueue;
  let target: EnqueueTarget;
  let redis: RedisClient;
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

  it('leaves the mark of a duplicate as it was: a redelivery does not extend the window', async () => {
    await enqueueOnce(target, job('a2-expiry'));
    await redis.expire(dedupeMarkKey(prefix, 'a2-expiry'), 5);
    expect(await enqueueOnce(target, job('a2-expiry'))).to.equal('duplicate');
    expect(await redis.ttl(dedupeMarkKey(prefix, 'a2-expiry'))).to.be.within(1, 5);
  });

  describe('when the job is still queued but its mark is gone (expired)', () => {
    it('keeps the one job, writes the mark again and reports a duplicate', async () => {
      await enqueueOnce(target, job('a3'));
      await redis.del(dedupeMarkKey(prefix, 'a3'));
      const before = await receiverQueue.queue.getWaitingCount();
      expect(await enqueueOnce(target, job('a3'))).to.equal('duplicate');
      expect(await receiverQueue.queue.getWaitingCount()).to.equal(before);
      expect(await redis.exists(dedupeMarkKey(prefix, 'a3'))).to.equal(1);
    });
  });

  describe("compared with bull 4 adding the same job itself (the script writes bull's layout)", () => {
    const jobKey = (id: string) => `${prefix}:${WEBHOOK_QUEUE_NAME}:${id}`;
    const parsedJobHash = async (id: string) => {
      const { opts = '{}', data = '{}', ...rest } = await redis.hgetall(jobKey(id));
      const { timestamp: optsTimestamp, jobId, ...options } = JSON.parse(opts) as Record<string, unknown>;
      return { rest, data: JSON.parse(data) as unknown, options, optsTimestamp, jobId };
    };

    it('writes the same hash fields, options and data', async () => {
      const ours = job('b1');
      const theirs = { ...job('b2'), dedupeKey: 'b1' };
      await enqueueOnce(target, ours);
      await receiverQueue.queue.add(theirs, { ...webhookJobOptions, jobId: 'b2' });
      const a = await parsedJobHash('b1');
      const b = await parsedJobHash('b2');
      expect(Object.keys(a.rest).sort()).to.deep.equal(Object.keys(b.rest).sort());
      expect({ ...a.rest, timestamp: 'x' }).to.deep.equal({ ...b.rest, timestamp: 'x' });
      expect(a.options).to.deep.equal(b.options);
      expect(a.data).to.deep.equal(b.data);
      expect([a.jobId, b.jobId]).to.deep.equal(['b1', 'b2']);
      expect(a.optsTimestamp).to.equal(Number(a.rest.timestamp));
      const waiting = await redis.lrange(`${prefix}:${WEBHOOK_QUEUE_NAME}:wait`, 0, -1);
      expect(waiting.slice(0, 2)).to.deep.equal(['b2', 'b1']);
    });

    it('puts the job in the paused list while the queue is paused, as bull does', async () => {
      await receiverQueue.queue.pause();
      try {
        await enqueueOnce(target, job('b3'));
        const paused = await redis.lrange(`${prefix}:${WEBHOOK_QUEUE_NAME}:paused`, 0, -1);
        expect(paused).to.include('b3');
      } finally {
        await receiverQueue.queue.resume();
      }
    });

    it("is processed by a bull worker with the queue's retry options, and announced as waiting", async () => {
      const worker = createWebhookQueue({ redis: testStack().redisUrl, prefix });
      try {
        await worker.empty();
        // bull subscribes to its event channel asynchronously and says so with 'registered:...'.
        const registered = new Promise((resolve) => worker.once('registered:global:waiting', resolve));
        const announced = new Promise<string>((resolve) =>
          worker.on('global:waiting', (id: string) => resolve(id)),
        );
        await registered;
        const seen = new Promise<Bull.Job<WebhookJobData>>((resolve, reject) => {
          void worker.process(async (processed) => {
            if (processed.attemptsMade === 0) throw new Error('first attempt fails');
            resolve(processed);
          });
          worker.on('error', reject);
        });
        await enqueueOnce(target, job('c1'));
        expect(await announced).to.equal('c1');
        const processed = await seen;
        expect(processed.id).to.equal('c1');
        expect(processed.data).to.deep.equal(job('c1'));
        expect(processed.attemptsMade).to.equal(1);
        expect(processed.opts).to.deep.include({
          attempts: webhookJobOptions.attempts,
          backoff: webhookJobOptions.backoff,
        });
      } finally {
        await worker.close();
      }
    });
  });

  describe('enqueueMany, several events in one script call', () => {
    it('answers per event in order: queued, a repeat within the batch and an earlier event are duplicates', async () => {
      await enqueueOnce(target, job('m0'));
      const waitKey = `${prefix}:${WEBHOOK_QUEUE_NAME}:wait`;
      const before = await redis.lrange(waitKey, 0, -1);
      const outcomes = await enqueueMany(
        target,
        ['m1', 'm2', 'm1', 'm0', 'm3'].map((key) => encodeWebhookJob(job(key))),
      );
      expect(outcomes).to.deep.equal(['queued', 'queued', 'duplicate', 'duplicate', 'queued']);
      // Pushed on the left in call order, as separate adds would be; each job is bull's usual hash.
      expect(await redis.lrange(waitKey, 0, -1)).to.deep.equal(['m3', 'm2', 'm1', ...before]);
      for (const key of ['m1', 'm2', 'm3']) {
        expect((await receiverQueue.queue.getJob(key))?.data).to.deep.equal(job(key));
        expect(await redis.exists(dedupeMarkKey(prefix, key))).to.equal(1);
      }
    });

    it('answers a batch of only duplicates without touching the wait list', async () => {
      await enqueueOnce(target, job('d0'));
      const waitKey = `${prefix}:${WEBHOOK_QUEUE_NAME}:wait`;
      const before = await redis.lrange(waitKey, 0, -1);
      const outcomes = await enqueueMany(target, [job('d0'), job('d0')].map(encodeWebhookJob));
      expect(outcomes).to.deep.equal(['duplicate', 'duplicate']);
      expect(await redis.lrange(waitKey, 0, -1)).to.deep.equal(before);
    });

    it('does nothing for an empty batch', async () => {
      expect(await enqueueMany(target, [])).to.deep.equal([]);
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

// A server where ROLE is renamed away (`rename-command ROLE ""`, as some hardened or proxied
// deployments have) answers "ERR unknown command". Only NOPERM was taken for a refusal: every
// fenced enqueue the script had queued failed all the same, was spooled, and the spool never drained.
describe('enqueueOnce fenced, on a master whose ROLE is renamed away', function () {
  this.timeout(30_000);
  const servers: LocalServer[] = [];
  let dir: string;
  let receiverQueue: ReceiverQueue;
  const prefix = 'role-renamed';
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'enqueue-no-role-'));
    const renamed = ['--rename-command', 'ROLE', '""'];
    const primary = await startRedis({ dir: join(dir, 'primary'), args: renamed });
    servers.push(primary);
    const replica = await startRedis({
      dir: join(dir, 'replica'),
      args: [...renamed, '--replicaof', '127.0.0.1', String(primary.port)],
    });
    servers.push(replica);
    receiverQueue = createReceiverQueue(primary.url, prefix);
    const admin = receiverQueue.client;
    if (admin.status !== 'ready') await new Promise((resolve) => admin.once('ready', resolve));
    // The replica has taken the primary's data set (online, past its first sync): WAIT counts it.
    const deadline = Date.now() + 20_000;
    while (!/^slave0:.*state=online/m.test(await admin.info('replication'))) {
      if (Date.now() > deadline) throw new Error('the replica did not attach');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
  after(async () => {
    await receiverQueue?.close();
    for (const server of servers.reverse()) await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('queues, waiting for the replica, and says once that ROLE is refused', async () => {
    const told: string[] = [];
    const target: EnqueueTarget = {
      queue: receiverQueue.queue,
      redis: receiverQueue.client,
      markPrefix: prefix,
      dedupeSeconds: 60,
      fence: new ReplicaFence(2_000, (message) => told.push(message)),
    };
    expect(await enqueueOnce(target, job('r1'))).to.equal('queued');
    expect(await enqueueOnce(target, job('r1'))).to.equal('duplicate');
    expect(await enqueueOnce(target, job('r2'))).to.equal('queued');
    expect(told).to.have.lengthOf(1);
    expect(told[0]).to.match(/unknown command/i);
    expect(await receiverQueue.queue.getWaitingCount()).to.equal(2);
  });
});
