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

  it('retries the job with backoff, keeps it in the failed set with its reason, and a replay applies it', async function () {
    this.timeout(120_000);
    await postgres.stop();
    const job = await queue!.add(jobDataOf(commentEvent({ commentId: 'cm-down' })), {
      ...webhookJobOptions,
      // The product's policy (exponential backoff), with fewer and shorter waits for the test.
      attempts: 3,
      backoff: { type: 'exponential', delay: 200 },
    });
    expect(await settled(job)).to.equal('failed');

    const failed = await queue!.getJob(job.id);
    expect(failed?.attemptsMade).to.equal(3);
    expect(await failed?.getState()).to.equal('failed');
    expect(failed?.failedReason).to.match(/connect|ECONNREFUSED|terminat|shut ?down|timed out/i);
    // Exponential backoff: the second wait (400 ms) follows the first (200 ms).
    expect(failed!.finishedOn! - failed!.timestamp).to.be.at.least(600);

    // Dead letter is replayable: once the database is back, retrying the job applies it.
    await postgres.start();
    await failed!.retry();
    expect(await settled(failed!)).to.equal('completed');
    const records = await readAll(storage!, 'u-ana');
    expect(records.map((record) => [record.verb, record.targetId])).to.deep.equal([['comment', 'p-100']]);
  });
});
