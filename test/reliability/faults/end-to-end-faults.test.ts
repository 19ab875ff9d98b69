import { expect } from 'chai';
import { Redis } from 'ioredis';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startRedis, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import { connectMongo } from '../../../shared/mongo/connect-mongo.ts';
import { WEBHOOK_QUEUE_NAME } from '../../../shared/queue/webhook-queue.ts';
import { EVENTS } from '../../../shared/tray/tray-record.ts';
import { uniqueName, useQueuePrefix } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import { sendBurst } from '../support/burst.ts';
import {
  faultSecret,
  startReceiverProcess,
  waitUntilDrained,
  type ReceiverProcess,
} from '../support/receiver-process.ts';
import { latencySummary, reportFigures, tally } from '../support/report-figures.ts';
import { startTrayProcess, type TrayProcess } from '../support/tray-process.ts';

const burstSize = Number(process.env.RELIABILITY_E2E_BURST ?? 1_000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Jobs bull still has to run (waiting, active, delayed); bounded wait until none are left. */
async function waitUntilQueueEmpty(redisUrl: string, prefix: string, timeoutMs: number): Promise<number> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  const base = `${prefix}:${WEBHOOK_QUEUE_NAME}`;
  const started = performance.now();
  try {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const [wait, active, delayed] = await Promise.all([
        redis.llen(`${base}:wait`),
        redis.llen(`${base}:active`),
        redis.zcard(`${base}:delayed`),
      ]);
      if (wait + active + delayed === 0) return performance.now() - started;
      await sleep(200);
    }
    throw new Error(`the worker did not empty the queue within ${timeoutMs} ms`);
  } finally {
    redis.disconnect();
  }
}

async function failedJobs(redisUrl: string, prefix: string): Promise<number> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  try {
    return await redis.zcard(`${prefix}:${WEBHOOK_QUEUE_NAME}:failed`);
  } finally {
    redis.disconnect();
  }
}

describe('faults end to end: receiver -> queue -> worker -> events collection (real processes)', function () {
  this.timeout(600_000);
  let dir: string;
  let redisPort: number;
  let redis: LocalServer;
  const processes: (ReceiverProcess | TrayProcess)[] = [];
  const startOwnRedis = async () => {
    redis = await startRedis({ dir: join(dir, 'redis'), port: redisPort, persistent: true });
  };
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'reliability-e2e-'));
    redisPort = await freePort();
    await startOwnRedis();
  });
  afterEach(async () => {
    for (const child of processes.splice(0)) await child.kill();
    await redis.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  describe('when the worker process is SIGKILLed mid-batch and another one is started', () => {
    it('recovers the stalled jobs and stores every acknowledged event exactly once', async () => {
      const prefix = useQueuePrefix();
      const dbName = uniqueName('e2e');
      const { client, db } = await connectMongo(testStack().mongoUri, dbName, { appName: 'reliability' });
      try {
        const receiver = await startReceiverProcess({
          redisUrl: redis.url,
          prefix,
          spoolDir: join(dir, 'spool'),
        });
        processes.push(receiver);
        const trayOptions = { redisUrl: redis.url, mongoUri: testStack().mongoUri, db: dbName, prefix };
        const first = await startTrayProcess(trayOptions);
        processes.push(first);
        const events = db.collection<{ _id: string }>(EVENTS);
        const count = Math.round(burstSize / 2);
        const started = performance.now();
        const deliveries = await sendBurst({
          urls: [receiver.url],
          secret: faultSecret,
          count,
          concurrency: 16,
          tag: 'e2e-worker-kill',
        });
        // Kill the worker once it is well into the batch (bounded wait), with jobs still active.
        for (let n = 0; n < 600 && (await events.countDocuments({})) < count * 0.2; n += 1) await sleep(100);
        const storedAtKill = await events.countDocuments({});
        await first.kill();
        const second = await startTrayProcess(trayOptions);
        processes.push(second);
        await waitUntilQueueEmpty(redis.url, prefix, 300_000);
        const endToEndMs = performance.now() - started;

        const acked = new Set(deliveries.filter((d) => d.status === 200).map((d) => d.id));
        const sent = new Set(deliveries.map((d) => d.id));
        const stored = new Set(
          (await events.find({}, { projection: { _id: 1 } }).toArray()).map((e) => e._id),
        );
        const figures = {
          sent: deliveries.length,
          statuses: tally(deliveries.map((d) => d.status)),
          acknowledged: acked.size,
          storedWhenKilled: storedAtKill,
          storedInEvents: stored.size,
          lost: [...acked].filter((id) => !stored.has(id)).length,
          duplicated: (await events.countDocuments({})) - stored.size,
          unknown: [...stored].filter((id) => !sent.has(id)).length,
          failedJobs: await failedJobs(redis.url, prefix),
          ackLatencyMs: latencySummary(deliveries.filter((d) => d.status === 200).map((d) => d.ms)),
          endToEndMs: Math.round(endToEndMs),
        };
        reportFigures('e2e worker SIGKILL mid-batch', figures);
        expect(storedAtKill, 'events stored before the kill').to.be.below(count);
        expect(figures).to.deep.include({
          lost: 0,
          duplicated: 0,
          unknown: 0,
          failedJobs: 0,
          acknowledged: count,
        });
      } finally {
        await db.dropDatabase().catch(() => undefined);
        await client.close();
      }
    });
  });

  describe('when Redis is SIGKILLed during a burst while the worker runs, and restarted 1.5 s later', () => {
    it('stores every acknowledged event in the events collection exactly once', async () => {
      const prefix = useQueuePrefix();
      const dbName = uniqueName('e2e');
      const { client, db } = await connectMongo(testStack().mongoUri, dbName, { appName: 'reliability' });
      try {
        const receiver = await startReceiverProcess({
          redisUrl: redis.url,
          prefix,
          spoolDir: join(dir, 'spool'),
        });
        processes.push(receiver);
        const tray = await startTrayProcess({
          redisUrl: redis.url,
          mongoUri: testStack().mongoUri,
          db: dbName,
          prefix,
        });
        processes.push(tray);
        let fault: Promise<void> | undefined;
        const started = performance.now();
        const deliveries = await sendBurst({
          urls: [receiver.url],
          secret: faultSecret,
          count: burstSize,
          concurrency: 16,
          tag: 'e2e-redis-kill',
          onAck: (acked) => {
            if (fault || acked < burstSize * 0.3) return;
            fault = (async () => {
              await redis.stop('SIGKILL');
              await sleep(1_500);
              await startOwnRedis();
            })();
          },
        });
        await fault;
        await waitUntilDrained(receiver.port);
        await waitUntilQueueEmpty(redis.url, prefix, 300_000);
        const endToEndMs = performance.now() - started;

        const acked = new Set(deliveries.filter((d) => d.status === 200).map((d) => d.id));
        const sent = new Set(deliveries.map((d) => d.id));
        const events = db.collection<{ _id: string }>(EVENTS);
        const stored = new Set(
          (await events.find({}, { projection: { _id: 1 } }).toArray()).map((e) => e._id),
        );
        const lost = [...acked].filter((id) => !stored.has(id)).length;
        const unknown = [...stored].filter((id) => !sent.has(id)).length;
        const failed = await failedJobs(redis.url, prefix);
        const figures = {
          sent: deliveries.length,
          statuses: tally(deliveries.map((d) => d.status)),
          acknowledged: acked.size,
          storedInEvents: stored.size,
          lost,
          // _id is the dedupe key: a second document of one event cannot exist; counted anyway.
          duplicated: (await events.countDocuments({})) - stored.size,
          unknown,
          failedJobs: failed,
          ackLatencyMs: latencySummary(deliveries.filter((d) => d.status === 200).map((d) => d.ms)),
          endToEndMs: Math.round(endToEndMs),
        };
        reportFigures('e2e redis SIGKILL with the worker running', figures);
        expect(figures).to.deep.include({
          lost: 0,
          duplicated: 0,
          unknown: 0,
          failedJobs: 0,
          acknowledged: burstSize,
        });
        expect(stored.size).to.equal(burstSize);
      } finally {
        await db.dropDatabase().catch(() => undefined);
        await client.close();
      }
    });
  });
});
