import { expect } from 'chai';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEAD_CHECKS } from '../../../receiver/spool/adopt-orphaned-segments.ts';
import { openSpool } from '../../../receiver/spool/open-spool.ts';
import { startSpoolDrainer } from '../../../receiver/spool/start-spool-drainer.ts';
import { createReceiverQueue, type ReceiverQueue } from '../../../receiver/store/create-receiver-queue.ts';
import {
  enqueueOnce,
  type EnqueueOutcome,
  type EnqueueTarget,
} from '../../../receiver/store/enqueue-once.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { encodeWebhookJob, type EncodedWebhookJob } from '../../../shared/queue/webhook-queue.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import { waitFor } from '../../support/wait-for.ts';
import { startBlackholeProxy } from '../../support/blackhole-proxy.ts';

const job = (n: number): EncodedWebhookJob =>
  encodeWebhookJob({
    dedupeKey: `drainer-${n}`,
    webhook: 'default',
    receivedAt: '2026-11-21T00:00:00.000Z',
    event: 'post.didCreate',
    data: { n },
  });

const logger = createLogger({ name: 'test', level: 'silent' });

describe('the spool drainer', () => {
  const prefix = useQueuePrefix();
  let receiverQueue: ReceiverQueue;
  let target: EnqueueTarget;
  let dir: string;
  before(async () => {
    receiverQueue = createReceiverQueue(testStack().redisUrl, prefix);
    await new Promise((resolve) => receiverQueue.client.once('ready', resolve));
    target = {
      queue: receiverQueue.queue,
      redis: receiverQueue.client,
      markPrefix: prefix,
      dedupeSeconds: 60,
    };
  });
  after(() => receiverQueue.close());
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'spool-drainer-test-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  describe('while Redis stays down and events keep arriving (passes 1 ms apart)', () => {
    it('leaves a bounded number of segment files, not one per pass', async () => {
      const spool = await openSpool(dir);
      let attempted: () => void = () => undefined;
      const drainer = startSpoolDrainer({
        spool,
        enqueue: () => {
          attempted();
          return Promise.reject(new Error('redis is down'));
        },
        logger,
        intervalMs: 1,
      });
      try {
        // An append, then a failed pass, and again: a steady stream of deliveries during the outage.
        for (let n = 0; n < 150; n += 1) {
          const pass = new Promise<void>((resolve) => (attempted = resolve));
          await spool.append(job(n));
          await pass;
        }
        expect(readdirSync(spool.dir), 'segment files after 150 failed passes').to.have.length.at.most(2);
        expect(spool.depth()).to.equal(150);
      } finally {
        await drainer.stop();
        await spool.close();
      }
    });
  });

  // A pass reads the oldest segment whole (up to 64 MiB) before its first enqueue: with Redis known
  // to be away, every second's pass read and split it only to fail at its first event, on the
  // thread that answers the webhooks.
  describe('while Redis is known to be away (blocked gives a reason)', () => {
    it('reads no segment, and drains every event once it says yes', async () => {
      const spool = await openSpool(dir);
      let reads = 0;
      const counting = {
        ...spool,
        drain: (...args: Parameters<typeof spool.drain>) => {
          reads += 1;
          return spool.drain(...args);
        },
      };
      // Keys of their own: a later test queues drainer-0 to drainer-1999 and counts them queued.
      for (const n of [1, 2, 3])
        await spool.append(
          encodeWebhookJob({
            dedupeKey: `gated-${n}`,
            webhook: 'default',
            receivedAt: '2026-11-21T00:00:00.000Z',
            event: 'post.didCreate',
            data: { n },
          }),
        );
      let up = false;
      let passes = 0;
      const drainer = startSpoolDrainer({
        spool: counting,
        enqueue: (event) => enqueueOnce(target, event),
        blocked: () => {
          passes += 1;
          return up ? undefined : 'Redis is not connected';
        },
        logger,
        intervalMs: 5,
      });
      try {
        await waitFor(() => passes >= 20, 5_000, '20 passes');
        expect(reads, 'spool drains while Redis was away').to.equal(0);
        expect(spool.depth()).to.equal(3);
        up = true;
        await waitFor(
          async () => (await receiverQueue.queue.getWaitingCount()) === 3 && spool.depth() === 0,
          5_000,
          'the spooled events queued',
        );
      } finally {
        await drainer.stop();
        await spool.close();
        await receiverQueue.queue.empty();
      }
    });
  });

  // A rolling restart: this receiver started while the other ran, so it took nothing over then.
  describe('while another receiver on the same SPOOL_DIR stops with events spooled', () => {
    it(`queues them within ${DEAD_CHECKS} take-over checks, each once`, async () => {
      const spool = await openSpool(dir, { adoptQuietMs: 0 });
      const other = await openSpool(dir);
      const rolling = (n: number) =>
        encodeWebhookJob({
          dedupeKey: `rolling-${n}`,
          webhook: 'default',
          receivedAt: '2026-11-21T00:00:00.000Z',
          event: 'post.didCreate',
          data: { n },
        });
      for (const n of [1, 2, 3]) await other.append(rolling(n));
      const drainer = startSpoolDrainer({
        spool,
        enqueue: (event) => enqueueOnce(target, event),
        logger,
        intervalMs: 5,
        adoptIntervalMs: 20,
      });
      try {
        await other.close();
        await waitFor(
          async () => (await receiverQueue.queue.getWaitingCount()) === 3 && spool.depth() === 0,
          10_000,
          "the other receiver's events queued",
        );
        const jobs = await receiverQueue.queue.getWaiting(0, -1);
        expect(jobs.map((queued) => queued.id).sort()).to.deep.equal(['rolling-1', 'rolling-2', 'rolling-3']);
      } finally {
        await drainer.stop();
        await spool.close();
        // The later tests count the queue's jobs from empty.
        await receiverQueue.queue.empty();
      }
      expect(readdirSync(dir), 'what the two receivers left').to.deep.equal([]);
    });
  });

  // After a long outage the spool may hold tens of thousands of events; a shutdown that waited for
  // all of them to be queued would run past its deadline and be cut off.
  describe('stopped while it drains a long spool (a shutdown after an outage)', () => {
    it('stops after the event in hand, and a later drain queues the rest: every event once', async () => {
      const total = 2_000;
      const spool = await openSpool(dir);
      await Promise.all(Array.from({ length: total }, (_, n) => spool.append(job(n))));
      let stopping: Promise<void> | undefined;
      const first: EnqueueOutcome[] = [];
      const drainer = startSpoolDrainer({
        spool,
        enqueue: (event) => enqueueOnce(target, event),
        logger,
        intervalMs: 60_000,
        onDrained: (outcome) => {
          first.push(outcome);
          // Stopped from inside the pass, so when it stops does not depend on timing.
          if (first.length === 10) stopping = drainer.stop();
        },
      });
      await waitFor(() => stopping !== undefined, 10_000, 'the drainer to be stopped');
      await stopping;
      const left = spool.depth();
      expect(left, 'events still spooled once stop() resolved').to.be.above(0);
      expect(first.length + left).to.equal(total);
      expect(await receiverQueue.queue.getWaitingCount()).to.equal(first.length);

      const second: EnqueueOutcome[] = [];
      const restarted = startSpoolDrainer({
        spool,
        enqueue: (event) => enqueueOnce(target, event),
        logger,
        intervalMs: 60_000,
        onDrained: (outcome) => second.push(outcome),
      });
      await waitFor(() => spool.depth() === 0, 15_000, 'the rest to drain');
      await restarted.stop();
      // Resumed after the last queued event: none handed over twice, none left out.
      expect(second).to.have.lengthOf(left);
      expect(second.every((outcome) => outcome === 'queued')).to.equal(true);
      const jobs = await receiverQueue.queue.getWaiting(0, -1);
      expect(new Set(jobs.map((queued) => String(queued.id))).size).to.equal(total);
      await spool.close();
    });
  });

  // A receiver replaced rather than restarted (a pod's emptyDir, a scaled-in machine) leaves its
  // spool to nobody: its shutdown gave up what it held though Redis was back and time was left.
  describe('stopped with time to spare once Redis is back (a shutdown after a blip)', () => {
    it('queues what it holds first, within the time given, each event once', async () => {
      const spool = await openSpool(dir);
      await Promise.all(Array.from({ length: 50 }, (_, n) => spool.append(job(7_000 + n))));
      let down = true;
      const drainer = startSpoolDrainer({
        spool,
        enqueue: (event) => enqueueOnce(target, event),
        blocked: () => (down ? 'Redis is not connected' : undefined),
        logger,
        intervalMs: 60_000,
      });
      await drainer.runOnce();
      expect(spool.depth(), 'held while Redis was down').to.equal(50);
      // Redis is back; the next pass is a minute away when the shutdown comes.
      down = false;
      await drainer.stop(5_000);
      expect(spool.depth()).to.equal(0);
      const jobs = await receiverQueue.queue.getWaiting(0, -1);
      const ids = new Set(jobs.map((queued) => String(queued.id)));
      expect(Array.from({ length: 50 }, (_, n) => ids.has(`drainer-${7_000 + n}`)).every(Boolean)).to.equal(
        true,
      );
      await receiverQueue.queue.empty();
      await spool.close();
    });

    // The receiver's checks of Redis (that it never evicts keys) come before any drain: a shutdown
    // soon after start must not queue into a Redis the process was about to refuse.
    it('queues nothing before the checks it starts after have passed', async () => {
      const spool = await openSpool(dir);
      await spool.append(job(9_000));
      let asked = 0;
      const drainer = startSpoolDrainer({
        spool,
        enqueue: (event) => {
          asked += 1;
          return enqueueOnce(target, event);
        },
        logger,
        intervalMs: 60_000,
        startAfter: new Promise(() => undefined),
      });
      await drainer.stop(1_000);
      expect(asked).to.equal(0);
      expect(spool.depth()).to.equal(1);
      await spool.close();
    });

    it('gives up the rest when the time given runs out, leaving it spooled', async () => {
      const spool = await openSpool(dir);
      await Promise.all(Array.from({ length: 2_000 }, (_, n) => spool.append(job(8_000 + n))));
      const drainer = startSpoolDrainer({
        spool,
        enqueue: async (event) => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          return enqueueOnce(target, event);
        },
        blocked: () => 'Redis is not connected',
        logger,
        intervalMs: 60_000,
      });
      await drainer.runOnce();
      const started = performance.now();
      // Blocked: no pass to make, and stop() does not wait for one.
      await drainer.stop(5_000);
      expect(performance.now() - started).to.be.below(1_000);
      expect(spool.depth()).to.equal(2_000);
      const again = startSpoolDrainer({
        spool,
        enqueue: async (event) => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          return enqueueOnce(target, event);
        },
        logger,
        intervalMs: 60_000,
      });
      const cut = performance.now();
      await again.stop(300);
      expect(performance.now() - cut, 'stop(300) took').to.be.below(2_000);
      const left = spool.depth();
      expect(left).to.be.above(0).and.below(2_000);
      await receiverQueue.queue.empty();
      await spool.close();
    });
  });

  // The shutdown's deadline (8 s) holds the HTTP grace (4 s) before the drainer's stop: a stop
  // that waited out the event in hand's enqueue budget (5 s) on a hung Redis ran past it, and the
  // process exited before the spool closed (no .stopped mark).
  describe('stopped while the event in hand waits on a Redis that went silent', () => {
    it('stops at once, leaving that event spooled, and a later drain queues it once', async () => {
      const proxy = await startBlackholeProxy(Number(new URL(testStack().redisUrl).port));
      const silentQueue = createReceiverQueue(`redis://127.0.0.1:${proxy.port}`, prefix);
      silentQueue.client.on('error', () => undefined);
      await new Promise((resolve) => silentQueue.client.once('ready', resolve));
      const spool = await openSpool(dir);
      try {
        await spool.append(job(5_000));
        proxy.blackhole();
        let asked = false;
        const drainer = startSpoolDrainer({
          spool,
          enqueue: (event) => {
            asked = true;
            return enqueueOnce({ ...target, queue: silentQueue.queue, redis: silentQueue.client }, event);
          },
          logger,
          intervalMs: 60_000,
          enqueueTimeoutMs: 5_000,
        });
        await waitFor(() => asked, 5_000, 'the drainer to hand the event to the silent Redis');
        const started = performance.now();
        await drainer.stop();
        // Not the add's 5 s budget: a loaded machine's slack, short of it.
        expect(performance.now() - started, 'stop() took').to.be.below(3_000);
        expect(spool.depth()).to.equal(1);
        const restarted = startSpoolDrainer({
          spool,
          enqueue: (event) => enqueueOnce(target, event),
          logger,
          intervalMs: 60_000,
        });
        await waitFor(() => spool.depth() === 0, 10_000, 'the event to drain');
        await restarted.stop();
        expect(await receiverQueue.queue.getJob('drainer-5000')).to.not.equal(null);
      } finally {
        await spool.close();
        silentQueue.client.disconnect();
        await proxy.close();
      }
    });
  });
});
