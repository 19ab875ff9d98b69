import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startFerret, startRedis, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import { connectMongo } from '../../../shared/mongo/connect-mongo.ts';
import { testPostgres } from '../../support/test-stack.ts';
import { uniqueName, useQueuePrefix } from '../../support/suite-resources.ts';
import { sendBurst } from '../support/burst.ts';
import { readEndToEndLedger, recoveredStalledJobs } from '../support/end-to-end-ledger.ts';
import { queueCounts } from '../support/queue-counts.ts';
import { outageAfterAcks } from '../support/outage-after-acks.ts';
import {
  faultSecret,
  startReceiverProcess,
  waitUntilDrained,
  type ReceiverProcess,
} from '../support/receiver-process.ts';
import { latencySummary, reportFigures, tally } from '../support/report-figures.ts';
import { socialBurstBodies } from '../support/social-burst.ts';
import { startTrayProcess, type TrayProcess } from '../support/tray-process.ts';

const count = Number(process.env.RELIABILITY_E2E_BURST ?? 1_000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The `err` of each "job failed" log line (pino JSON) of a tray-service process. */
function failureReasons(output: string): string[] {
  return output
    .split('\n')
    .filter((line) => line.includes('job failed'))
    .map((line) => {
      try {
        return String((JSON.parse(line) as { err?: unknown }).err ?? 'no err').slice(0, 60);
      } catch {
        return 'unparsed log line';
      }
    });
}

describe('two receivers and two workers at once, the MongoDB-compatible server stopped during processing', function () {
  this.timeout(900_000);
  let dir: string;
  let redis: LocalServer;
  let ferret: LocalServer;
  let ferretPort: number;
  let postgresUrl: string;
  const processes: (ReceiverProcess | TrayProcess)[] = [];
  const startOwnFerret = async () => {
    postgresUrl = (await testPostgres()).url;
    ferret = await startFerret({
      dir: join(dir, 'ferret'),
      port: ferretPort,
      postgresUrl: (await testPostgres()).ferretUrl,
    });
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

  it('stores every acknowledged event exactly once, with no failed job, and the tray equals the model', async () => {
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
    const trayOptions = { redisUrl: redis.url, mongoUri: ferret.url, postgresUrl, db: dbName, prefix };
    const workers: TrayProcess[] = [];
    for (let n = 0; n < 2; n += 1) {
      const worker = await startTrayProcess(trayOptions);
      processes.push(worker);
      workers.push(worker);
    }

    const bodies = socialBurstBodies('two-of-each', count);
    // Every event goes to both receivers: stop the database (SIGTERM) 60 % of the way in, for 3 s.
    const outage = outageAfterAcks({
      acks: count * 0.6,
      downMs: 3_000,
      stop: () => ferret.stop(),
      start: startOwnFerret,
    });
    const started = performance.now();
    const deliveries = await sendBurst({
      urls: receivers.map((receiver) => receiver.url),
      secret: faultSecret,
      bodies,
      concurrency: 8,
      onAck: outage.onAck,
    });
    await outage.done();
    await Promise.all(receivers.map((receiver) => waitUntilDrained(receiver.port)));
    const deadline = Date.now() + 480_000;
    let counts = await queueCounts(redis.url, prefix);
    while (counts.pending > 0 && Date.now() < deadline) {
      await sleep(500);
      counts = await queueCounts(redis.url, prefix);
    }
    const endToEndMs = performance.now() - started;

    const { client, db } = await connectMongo(ferret.url, dbName, { appName: 'reliability' });
    try {
      const { ledger, firstMismatches } = await readEndToEndLedger(db, bodies, deliveries, workers[0]!.port);
      const figures = {
        events: count,
        requests: deliveries.length,
        statuses: tally(deliveries.map((d) => d.status)),
        ...ledger,
        // Attempts the workers logged as failed (bull retries them): shows the outage was felt.
        failedAttempts: workers.reduce(
          (sum, worker) => sum + (worker.output().match(/job failed/g) ?? []).length,
          0,
        ),
        // Why they failed (first 60 characters of each error), so a slow or stuck run explains itself.
        failureReasons: tally(workers.flatMap((worker) => failureReasons(worker.output()))),
        // Per process: one CI run had a process failing every job with the same closed connection.
        failedAttemptsPerProcess: workers.map((worker) => failureReasons(worker.output()).length),
        pendingJobs: counts.pending,
        failedJobs: counts.failed,
        recoveredStalledJobs: await recoveredStalledJobs(redis.url, prefix),
        ackLatencyMs: latencySummary(deliveries.filter((d) => d.status === 200).map((d) => d.ms)),
        outageAfterMs: Math.round((outage.startedAt() ?? started) - started),
        databaseDownForMs: outage.downForMs(),
        endToEndMs: Math.round(endToEndMs),
      };
      reportFigures('two receivers, two workers, database stopped 3 s', figures);
      if (ledger.trayMismatches > 0 || ledger.unreadMismatches > 0) {
        // Evidence for the next occurrence: what each tray process logged last.
        workers.forEach((worker, n) => {
          const tail = worker.output().trimEnd().split('\n').slice(-40).join('\n');
          process.stderr.write(`[two-of-each] tray process ${n}, last log lines:\n${tail}\n`);
        });
      }
      expect(firstMismatches, 'tray records differing from the model').to.deep.equal([]);
      expect(figures).to.deep.include({
        acknowledged: count,
        lost: 0,
        duplicated: 0,
        unknown: 0,
        pendingJobs: 0,
        failedJobs: 0,
        trayMismatches: 0,
        unreadMismatches: 0,
      });
    } finally {
      await db.dropDatabase().catch(() => undefined);
      await client.close();
    }
  });
});
