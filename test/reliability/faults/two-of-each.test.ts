import { expect } from 'chai';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { sendBurst } from '../support/burst.ts';
import { readEndToEndLedger, recoveredStalledJobs } from '../support/end-to-end-ledger.ts';
import { leadingProcessed } from '../support/leading-processed.ts';
import { printMismatchEvidence } from '../support/mismatch-evidence.ts';
import { queueCounts } from '../support/queue-counts.ts';
import { outageAfterAcks } from '../support/outage-after-acks.ts';
import { faultSecret, waitUntilDrained, type ReceiverProcess } from '../support/receiver-process.ts';
import { latencySummary, reportFigures, tally } from '../support/report-figures.ts';
import { socialBurstBodies } from '../support/social-burst.ts';
import { withTargetStorage } from '../support/storage-target.ts';
import {
  type StoppedDatabase,
  useStoppableFerret,
  useStoppablePostgresDatabase,
} from '../support/stoppable-database.ts';
import { type TrayProcess } from '../support/tray-process.ts';
import { useFaultStage } from '../support/fault-stage.ts';

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

describe('two receivers and two workers at once, the database server stopped during processing', function () {
  this.timeout(900_000);
  const stage = useFaultStage('two', 'all', { redis: 'volatile' });

  describe('on PostgreSQL (the default storage), its server stopped (fast shutdown) for 3 s', () => {
    const postgres = useStoppablePostgresDatabase();
    it('stores every acknowledged event exactly once, with no failed job, and the tray equals the model', () =>
      scenario(postgres));
  });

  // The MongoDB adapter meets the same fault: both adapters must survive their server going away.
  describe('on the MongoDB adapter (FerretDB), FerretDB stopped (SIGTERM) for 3 s', () => {
    const ferret = useStoppableFerret(() => stage.dir, 'two');
    it('stores every acknowledged event exactly once, with no failed job, and the tray equals the model', () =>
      scenario(ferret));
  });

  async function scenario(database: StoppedDatabase): Promise<void> {
    const prefix = useQueuePrefix();
    // Each child is registered as soon as it runs, so a failed start never leaves one behind.
    const receivers: ReceiverProcess[] = [];
    for (const name of ['a', 'b']) {
      const receiver = await stage.startReceiver(prefix, `spool-${name}-${prefix}`);
      receivers.push(receiver);
    }
    const workers: TrayProcess[] = [];
    for (let n = 0; n < 2; n += 1)
      workers.push(await stage.startTray({ storage: database.target(), prefix }));

    const bodies = socialBurstBodies('two-of-each', count);
    // Every event goes to both receivers: stop the database 60 % of the way in, for 3 s.
    const outage = outageAfterAcks({
      acks: count * 0.6,
      downMs: 3_000,
      stop: () => database.stop(),
      start: () => database.start(),
    });
    const started = performance.now();
    const deliveries = await sendBurst({
      urls: receivers.map((receiver) => receiver.url),
      secret: faultSecret,
      bodies,
      concurrency: 8,
      onAck: outage.onAck,
      settleLeading: leadingProcessed(
        stage.redis.url,
        prefix,
        receivers.map((receiver) => receiver.port),
      ),
    });
    await outage.done();
    await Promise.all(receivers.map((receiver) => waitUntilDrained(receiver.port)));
    const alive = (worker: TrayProcess) => worker.child.exitCode === null && worker.child.signalCode === null;
    const deadline = Date.now() + 480_000;
    let counts = await queueCounts(stage.redis.url, prefix);
    while (counts.pending > 0 && Date.now() < deadline && workers.some(alive)) {
      await sleep(500);
      counts = await queueCounts(stage.redis.url, prefix);
    }
    const endToEndMs = performance.now() - started;
    // Evidence for the next occurrence: what a tray process logged last.
    const printTail = (worker: TrayProcess, n: number) => {
      const tail = worker.output().trimEnd().split('\n').slice(-40).join('\n');
      process.stderr.write(`[two-of-each] tray process ${n}, last log lines:\n${tail}\n`);
    };
    // The outage is one the processes must ride out (bull retries the jobs), not die of.
    workers.forEach((worker, n) => {
      if (!alive(worker)) printTail(worker, n);
    });
    expect(workers.filter(alive), 'tray processes still running after the outage').to.have.length(
      workers.length,
    );

    const { ledger, firstMismatches } = await withTargetStorage(database.target(), (storage) =>
      readEndToEndLedger(storage, bodies, deliveries, workers[0]!.port),
    );
    const figures = {
      storage: database.name,
      events: count,
      requests: deliveries.length,
      statuses: tally(deliveries.map((d) => d.status)),
      ...ledger,
      // Tray processes that saw the outage: their storage gate stopped taking jobs until it answered.
      workersThatSawTheOutage: workers.filter((worker) => worker.output().includes('storage does not answer'))
        .length,
      // Attempts the workers logged as failed (bull retries them): the gate parks jobs instead, so
      // this stays 0 unless a job fails for another reason.
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
      recoveredStalledJobs: await recoveredStalledJobs(stage.redis.url, prefix),
      ackLatencyMs: latencySummary(deliveries.filter((d) => d.status === 200).map((d) => d.ms)),
      outageAfterMs: Math.round((outage.startedAt() ?? started) - started),
      databaseDownForMs: outage.downForMs(),
      endToEndMs: Math.round(endToEndMs),
    };
    reportFigures(`two receivers, two workers, ${database.name} stopped 3 s`, figures);
    if (ledger.trayMismatches > 0 || ledger.unreadMismatches > 0) workers.forEach(printTail);
    if (firstMismatches.length > 0) await printMismatchEvidence(database.target(), firstMismatches);
    expect(firstMismatches, 'tray records differing from the model').to.deep.equal([]);
    expect(figures.workersThatSawTheOutage, 'tray processes that saw the outage').to.be.above(0);
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
  }
});
