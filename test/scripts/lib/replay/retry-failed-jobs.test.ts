import { expect } from 'chai';
import {
  failedJobIdPages,
  failedSoFar,
  retryFailedJobs,
} from '../../../../scripts/lib/replay/retry-failed-jobs.ts';
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
      expect(counts).to.deep.equal({ moved: 0, skipped: 1, errors: 0, errorMessages: [] });
    } finally {
      await queue.close();
    }
  });

  // An error count alone ("5000 errors", exit 3) left the operator nothing to act on.
  it('keeps the first distinct messages of the errors that stopped jobs from moving', async () => {
    const queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    try {
      const failed = new Promise<void>((resolve) => queue.on('failed', () => resolve()));
      void queue.process(async () => {
        throw new Error('down');
      });
      await queue.add(job('stuck'), { jobId: 'stuck', attempts: 1 });
      await failed;
      // The waiting list as a string: bull's retry script's LPUSH is refused by Redis itself.
      await queue.client.set(`${prefix}:${queue.name}:wait`, 'not a list');
      const counts = await retryFailedJobs(queue, ['stuck'], () => undefined);
      expect(counts).to.deep.include({ moved: 0, skipped: 0, errors: 1 });
      expect(counts.errorMessages).to.have.lengthOf(1);
      expect(counts.errorMessages[0]).to.match(/WRONGTYPE/);
    } finally {
      await queue.client.del(`${prefix}:${queue.name}:wait`);
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
      expect(counts).to.deep.equal({ moved: 1, skipped: 0, errors: 0, errorMessages: [] });
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

// The whole failed set in one call (ZRANGE 0 -1 of millions of ids) stalled the Redis the
// receiver writes to, and held every id in memory.
describe('failedJobIdPages (npm run replay -- failed)', function () {
  this.timeout(30_000);
  const prefix = useQueuePrefix();

  it('gives every job that failed by then once, oldest first, in pages, ties and a shrinking set included', async () => {
    const queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    try {
      const key = `${prefix}:${queue.name}:failed`;
      // 25 jobs over 5 failure times (ties of 5), one failed after the run began.
      const entries = Array.from({ length: 25 }, (_, n) => ({
        id: `j-${String(n).padStart(2, '0')}`,
        at: 1_000 + Math.floor(n / 5) * 10,
      }));
      entries.push({ id: 'j-later', at: 5_000 });
      await queue.client.zadd(key, ...entries.flatMap(({ id, at }) => [at, id]));
      const pages: string[][] = [];
      for await (const page of failedJobIdPages(queue, { limit: Infinity, upTo: 2_000, pageSize: 7 })) {
        pages.push(page);
        // As a replay does: the page's jobs leave the set before the next page is read.
        await queue.client.zrem(key, ...page.slice(0, 3));
      }
      expect(pages.map((page) => page.length)).to.deep.equal([7, 7, 7, 4]);
      expect(pages.flat()).to.deep.equal(entries.slice(0, 25).map(({ id }) => id));

      // --limit counts what is given, also when the jobs given leave the set between pages (as a
      // replay's do): the ids kept to skip a tie made room for more than the limit.
      await queue.client.del(key);
      await queue.client.zadd(key, ...Array.from({ length: 10 }, (_, n) => [3_000 + n, `l-${n}`]).flat());
      const limited: string[] = [];
      for await (const page of failedJobIdPages(queue, { limit: 5, upTo: 3_100, pageSize: 3 })) {
        limited.push(...page);
        await queue.client.zrem(key, ...page);
      }
      expect(limited).to.deep.equal(['l-0', 'l-1', 'l-2', 'l-3', 'l-4']);
    } finally {
      await queue.close();
    }
  });

  // bull stamps a failure with its worker's clock. The cut-off came from the operator's: run from
  // a machine whose clock was behind the workers', the newest failures were left out unnamed.
  it("takes every job in the set at the start, whatever the failing workers' clocks said", async () => {
    const queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    try {
      const key = `${prefix}:${queue.name}:failed`;
      await queue.client.del(key);
      expect(await failedSoFar(queue, Infinity)).to.deep.equal({ upTo: -Infinity, total: 0 });
      const pagesOfNothing: string[][] = [];
      for await (const page of failedJobIdPages(queue, { limit: Infinity, upTo: -Infinity }))
        pagesOfNothing.push(page);
      expect(pagesOfNothing).to.deep.equal([]);

      // One failure stamped an hour ahead of this machine's clock (a worker's clock ahead of it).
      const ahead = Date.now() + 3_600_000;
      await queue.client.zadd(key, 1_000, 'past', ahead, 'ahead');
      const { upTo, total } = await failedSoFar(queue, Infinity);
      expect({ upTo, total }).to.deep.equal({ upTo: ahead, total: 2 });
      expect(await failedSoFar(queue, 1)).to.deep.equal({ upTo: ahead, total: 1 });
      const ids: string[] = [];
      for await (const page of failedJobIdPages(queue, { limit: Infinity, upTo })) ids.push(...page);
      expect(ids).to.deep.equal(['past', 'ahead']);
    } finally {
      await queue.close();
    }
  });
});
