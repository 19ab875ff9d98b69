import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Bull from 'bull';
import { startFerret, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import { createMetricsRegistry } from '../../../shared/http/metrics-router.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { connectMongo, type MongoConnection } from '../../../shared/mongo/connect-mongo.ts';
import {
  createWebhookQueue,
  webhookJobOptions,
  type WebhookJobData,
} from '../../../shared/queue/webhook-queue.ts';
import { TRAY_RECORDS } from '../../../shared/tray/tray-record.ts';
import { startWorker, type RunningWorker } from '../../../tray-service/worker/start-worker.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { testPostgres, testStack } from '../../support/test-stack.ts';
import { commentEvent } from './event-builder.ts';
import { jobDataOf } from './worker-harness.ts';

/** Resolves once the job reached a final state (completed, or failed with no attempt left). */
async function settled(job: Bull.Job<WebhookJobData>): Promise<string> {
  return job.finished().then(
    () => 'completed',
    () => 'failed',
  );
}

describe('tray worker when MongoDB is unavailable', () => {
  const prefix = useQueuePrefix();
  let dir = '';
  let ferret: LocalServer | undefined;
  let mongo: MongoConnection | undefined;
  let queue: Bull.Queue<WebhookJobData> | undefined;
  let worker: RunningWorker | undefined;

  before(async function () {
    this.timeout(60_000);
    dir = mkdtempSync(join(tmpdir(), 'tray-worker-failures-'));
    ferret = await startFerret({ dir, postgresUrl: (await testPostgres()).ferretUrl });
    mongo = await connectMongo(ferret.url, 'failures', { appName: 'tests', serverSelectionTimeoutMS: 300 });
    queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    worker = await startWorker({
      queue,
      db: mongo.db,
      logger: createLogger({ name: 'test', level: 'silent' }),
      registry: createMetricsRegistry('test', false),
      purgeIntervalMs: 0,
    });
  });
  after(async function () {
    this.timeout(30_000);
    await worker?.close();
    await mongo?.client.close();
    await ferret?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('retries the job with backoff, keeps it in the failed set with its reason, and a replay applies it', async function () {
    this.timeout(120_000);
    await ferret!.stop();
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
    expect(failed?.failedReason).to.match(/connect|ECONNREFUSED|Server selection|timed out/i);
    // Exponential backoff: the second wait (400 ms) follows the first (200 ms).
    expect(failed!.finishedOn! - failed!.timestamp).to.be.at.least(600);

    // Dead letter is replayable: once MongoDB is back, retrying the job applies it.
    ferret = await startFerret({ dir, port: ferret!.port, postgresUrl: (await testPostgres()).ferretUrl });
    await failed!.retry();
    expect(await settled(failed!)).to.equal('completed');
    expect(
      await mongo!.db.collection(TRAY_RECORDS).countDocuments({ _id: 'comment_p-100_u-ana' as never }),
    ).to.equal(1);
  });
});
