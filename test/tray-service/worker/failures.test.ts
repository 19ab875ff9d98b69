import { expect } from 'chai';
import type Bull from 'bull';
import { createMetricsRegistry } from '../../../shared/http/metrics-router.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import {
  createWebhookQueue,
  webhookJobOptions,
  type WebhookJobData,
} from '../../../shared/queue/webhook-queue.ts';
import { startWorker, type RunningWorker } from '../../../tray-service/worker/start-worker.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import { useStoppablePostgres } from '../../support/use-stoppable-postgres.ts';
import type { TrayStorage } from '../../../tray-service/storage/port.ts';
import { commentEvent } from './event-builder.ts';
import { jobDataOf, readAll } from './worker-harness.ts';

/** Resolves once the job reached a final state (completed, or failed with no attempt left). */
async function settled(job: Bull.Job<WebhookJobData>): Promise<string> {
  return job.finished().then(
    () => 'completed',
    () => 'failed',
  );
}

describe('tray worker when its database is unavailable', () => {
  const prefix = useQueuePrefix();
  const postgres = useStoppablePostgres();
  let storage: TrayStorage | undefined;
  let queue: Bull.Queue<WebhookJobData> | undefined;
  let worker: RunningWorker | undefined;

  before(async function () {
    this.timeout(60_000);
    storage = await postgres.openStorage();
    queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    worker = await startWorker({
      queue,
      storage,
      logger: createLogger({ name: 'test', level: 'silent' }),
      registry: createMetricsRegistry('test', false),
      purgeIntervalMs: 0,
    });
  });
  after(async function () {
    this.timeout(30_000);
    await worker?.close();
  });

  it('holds the job without spending an attempt while the database is down, and applies it once it answers', async function () {
    this.timeout(120_000);
    await postgres.stop();
    const job = await queue!.add(jobDataOf(commentEvent({ commentId: 'cm-down' })), {
      ...webhookJobOptions,
      // Before the storage gate, these 3 short attempts all failed within a second.
      attempts: 3,
      backoff: { type: 'exponential', delay: 200 },
    });
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const waiting = await queue!.getJob(job.id);
    expect(await waiting?.getState()).to.equal('active');
    expect(waiting?.attemptsMade).to.equal(0);

    await postgres.start();
    expect(await settled(job)).to.equal('completed');
    expect((await queue!.getJob(job.id))?.attemptsMade).to.equal(0);
    const records = await readAll(storage!, 'u-ana');
    expect(records.map((record) => [record.verb, record.targetId])).to.deep.equal([['comment', 'p-100']]);
  });
});

describe('tray worker when a job fails for a reason of its own (the database answers)', () => {
  const prefix = useQueuePrefix();
  const postgres = useStoppablePostgres();
  let queue: Bull.Queue<WebhookJobData> | undefined;
  let worker: RunningWorker | undefined;

  before(async function () {
    this.timeout(60_000);
    const storage = await postgres.openStorage();
    queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    // Storing the event fails while the server answers its ping: the job's failure, not an outage.
    const events = new Proxy(storage.events, {
      get: () => () => Promise.reject(new Error('refused by the test')),
    });
    worker = await startWorker({
      queue,
      storage: { ...storage, events, ping: () => storage.ping() },
      logger: createLogger({ name: 'test', level: 'silent' }),
      registry: createMetricsRegistry('test', false),
      purgeIntervalMs: 0,
    });
  });
  after(async function () {
    this.timeout(30_000);
    await worker?.close();
  });

  it('retries the job with backoff and keeps it in the failed set with its reason', async function () {
    this.timeout(60_000);
    const job = await queue!.add(jobDataOf(commentEvent({ commentId: 'cm-own' })), {
      ...webhookJobOptions,
      attempts: 3,
      backoff: { type: 'exponential', delay: 200 },
    });
    expect(await settled(job)).to.equal('failed');
    const failed = await queue!.getJob(job.id);
    expect(failed?.attemptsMade).to.equal(3);
    expect(failed?.failedReason).to.equal('refused by the test');
    // Exponential backoff: the second wait (400 ms) follows the first (200 ms).
    expect(failed!.finishedOn! - failed!.timestamp).to.be.at.least(600);
  });
});
