import { expect } from 'chai';
import { Redis } from 'ioredis';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startFerret, startRedis, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import { connectMongo } from '../../../shared/mongo/connect-mongo.ts';
import { WEBHOOK_QUEUE_NAME } from '../../../shared/queue/webhook-queue.ts';
import { EVENTS } from '../../../shared/tray/tray-record.ts';
import { uniqueName, useQueuePrefix } from '../../support/suite-resources.ts';
import { sendBurst } from '../support/burst.ts';
import {
  faultSecret,
  startReceiverProcess,
  waitUntilDrained,
  type ReceiverProcess,
} from '../support/receiver-process.ts';
import { latencySummary, reportFigures, tally } from '../support/report-figures.ts';
import { startTrayProcess, type TrayProcess } from '../support/tray-process.ts';

const count = Number(process.env.RELIABILITY_E2E_BURST ?? 1_000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function queueCounts(redisUrl: string, prefix: string) {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  const base = `${prefix}:${WEBHOOK_QUEUE_NAME}`;
  try {
    const [wait, active, delayed, failed] = await Promise.all([
      redis.llen(`${base}:wait`),
      redis.llen(`${base}:active`),
      redis.zcard(`${base}:delayed`),
      redis.zcard(`${base}:failed`),
    ]);
    return { pending: wait + active + delayed, failed };
  } finally {
    redis.disconnect();
  }
}

describe('two receivers and two workers at once, the MongoDB-compatible server stopped during processing', function () {
  this.timeout(600_000);
  let dir: string;
  let redis: LocalServer;
  let ferret: LocalServer;
  let ferretPort: number;
  const processes: (ReceiverProcess | TrayProcess)[] = [];
  const startOwnFerret = async () => {
    ferret = await startFerret({ dir: join(dir, 'ferret'), port: ferretPort });
  };
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'reliability-two-'));
    ferretPort = await freePort();
    redis = await startRedis({ dir: join(dir, 'redis'), persistent: true });
    await startOwnFerret();
  });
  after(async () => {
    for (const child of processes.splice(0)) await child.kill();
    await Promise.all([redis.stop('SIGKILL'), ferret.stop('SIGKILL')]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores every acknowledged event exactly once, with no failed job', async () => {
    const prefix = useQueuePrefix();
    const dbName = uniqueName('two');
    // Each child is registered as soon as it runs, so a failed start never leaves one behind.
    const receivers: ReceiverProcess[] = [];
    for (const name of ['a', 'b']) {
      const receiver = await startReceiverProcess({
        redisUrl: redis.url,
        prefix,
        spoolDir: join(dir, `spool-${name}`),
      });
      processes.push(receiver);
      receivers.push(receiver);
    }
    const trayOptions = { redisUrl: redis.url, mongoUri: ferret.url, db: dbName, prefix };
    const workers: TrayProcess[] = [];
    for (let n = 0; n < 2; n += 1) {
      const worker = await startTrayProcess(trayOptions);
      processes.push(worker);
      workers.push(worker);
    }

    const started = performance.now();
    let outage: Promise<void> | undefined;
    let outageStartedAt = 0;
    const deliveries = await sendBurst({
      urls: receivers.map((receiver) => receiver.url),
      secret: faultSecret,
      count,
      concurrency: 8,
      tag: 'two-of-each',
      onAck: (acked) => {
        // Every event goes to both receivers: stop the database a third of the way in, for 3 s.
        if (outage || acked < count * 0.6) return;
        outageStartedAt = performance.now();
        outage = (async () => {
          await ferret.stop();
          await sleep(3_000);
          await startOwnFerret();
        })();
      },
    });
    await outage;
    await Promise.all(receivers.map((receiver) => waitUntilDrained(receiver.port)));
    const deadline = Date.now() + 400_000;
    let counts = await queueCounts(redis.url, prefix);
    while (counts.pending > 0 && Date.now() < deadline) {
      await sleep(500);
      counts = await queueCounts(redis.url, prefix);
    }
    const endToEndMs = performance.now() - started;

    const { client, db } = await connectMongo(ferret.url, dbName, { appName: 'reliability' });
    try {
      const acked = new Set(deliveries.filter((d) => d.status === 200).map((d) => d.id));
      const sent = new Set(deliveries.map((d) => d.id));
      const events = db.collection<{ _id: string }>(EVENTS);
      const stored = new Set((await events.find({}, { projection: { _id: 1 } }).toArray()).map((e) => e._id));
      const figures = {
        events: count,
        requests: deliveries.length,
        statuses: tally(deliveries.map((d) => d.status)),
        acknowledged: acked.size,
        storedInEvents: stored.size,
        lost: [...acked].filter((id) => !stored.has(id)).length,
        duplicated: (await events.countDocuments({})) - stored.size,
        unknown: [...stored].filter((id) => !sent.has(id)).length,
        // Attempts the workers logged as failed (bull retries them): shows the outage was felt.
        failedAttempts: workers.reduce(
          (sum, worker) => sum + (worker.output().match(/job failed/g) ?? []).length,
          0,
        ),
        pendingJobs: counts.pending,
        failedJobs: counts.failed,
        ackLatencyMs: latencySummary(deliveries.filter((d) => d.status === 200).map((d) => d.ms)),
        outageAfterMs: Math.round(outageStartedAt - started),
        endToEndMs: Math.round(endToEndMs),
      };
      reportFigures('two receivers, two workers, database stopped 3 s', figures);
      expect(figures).to.deep.include({
        acknowledged: count,
        lost: 0,
        duplicated: 0,
        unknown: 0,
        pendingJobs: 0,
        failedJobs: 0,
      });
    } finally {
      await db.dropDatabase().catch(() => undefined);
      await client.close();
    }
  });
});
