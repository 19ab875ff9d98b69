import { expect } from 'chai';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { usePostgres } from '../../support/use-postgres.ts';
import { sendBurst } from '../support/burst.ts';
import {
  readEndToEndLedger,
  recoveredStalledJobs,
  waitUntilQueueEmpty,
} from '../support/end-to-end-ledger.ts';
import { leadingProcessed } from '../support/leading-processed.ts';
import { queueCounts } from '../support/queue-counts.ts';
import { outageAfterAcks } from '../support/outage-after-acks.ts';
import { faultSecret, metricValue, waitUntilDrained } from '../support/receiver-process.ts';
import { latencySummary, reportFigures, tally } from '../support/report-figures.ts';
import { socialBurstBodies } from '../support/social-burst.ts';
import { openTargetStorage, type StorageTarget } from '../support/storage-target.ts';
import { useFaultStage } from '../support/fault-stage.ts';

const burstSize = Number(process.env.RELIABILITY_E2E_BURST ?? 1_000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/**
 * The tray processes' job lock and stalled-job check (TRAY_JOB_LOCK_MS): 5 s instead of bull's
 * 30 s, so the jobs a fault leaves active come back within 10 to 15 s, not 60 to 90 s (the whole
 * of these scenarios' time in CI). The recovery is the same code at either value; a shorter lock
 * only makes a live job's lock more likely to run out under load, a stall more, which the
 * once-only checks below then have to survive as well.
 */
const trayEnv = { TRAY_JOB_LOCK_MS: '5000' };

// On the default storage (PostgreSQL, a database of each scenario's own on the test server); the
// MongoDB adapter meets a fault in two-of-each.test.ts.
describe('faults end to end: receiver -> queue -> worker -> events and tray (real processes, PostgreSQL)', function () {
  this.timeout(900_000);
  const stage = useFaultStage('e2e', 'each');

  describe('when the worker process is SIGKILLed mid-batch and another one is started', () => {
    const postgres = usePostgres();
    it('recovers the stalled jobs, stores every acknowledged event once and the tray equals the model (side effects once)', async () => {
      const prefix = useQueuePrefix();
      const target: StorageTarget = { engine: 'postgres', url: postgres.url };
      const storage = await openTargetStorage(target);
      try {
        const receiver = await stage.startReceiver(prefix);
        const first = await stage.startTray({ storage: target, prefix, env: trayEnv });
        const bodies = socialBurstBodies('e2e-worker-kill', Math.round(burstSize / 2));
        const started = performance.now();
        // Sent while the worker runs, not before: on PostgreSQL the worker keeps pace with the
        // receiver, so a burst sent first would be fully applied before any kill.
        const sending = sendBurst({
          urls: [receiver.url],
          secret: faultSecret,
          bodies,
          concurrency: 16,
          settleLeading: leadingProcessed(stage.redis.url, prefix, [receiver.port]),
        });
        // Kill the worker once it is well into the batch (bounded wait), with jobs still active.
        for (let n = 0; n < 600 && (await storage.events.count({})) < bodies.length * 0.2; n += 1) {
          await sleep(20);
        }
        const storedAtKill = await storage.events.count({});
        await first.kill();
        const deliveries = await sending;
        const second = await stage.startTray({ storage: target, prefix, env: trayEnv });
        await waitUntilQueueEmpty(stage.redis.url, prefix, 480_000);
        const endToEndMs = performance.now() - started;

        const { ledger, firstMismatches } = await readEndToEndLedger(
          storage,
          bodies,
          deliveries,
          second.port,
        );
        const figures = {
          sent: deliveries.length,
          statuses: tally(deliveries.map((d) => d.status)),
          storedWhenKilled: storedAtKill,
          ...ledger,
          failedJobs: (await queueCounts(stage.redis.url, prefix)).failed,
          recoveredStalledJobs: await recoveredStalledJobs(stage.redis.url, prefix),
          ackLatencyMs: latencySummary(deliveries.filter((d) => d.status === 200).map((d) => d.ms)),
          endToEndMs: Math.round(endToEndMs),
        };
        reportFigures('e2e worker SIGKILL mid-batch', figures);
        expect(storedAtKill, 'events stored before the kill').to.be.below(bodies.length);
        // Jobs the killed worker had started ran again in the new one: the tray check below is what
        // shows their side effects happened once.
        expect(figures.recoveredStalledJobs, 'jobs run twice').to.be.above(0);
        expect(firstMismatches, 'tray records differing from the model').to.deep.equal([]);
        expect(figures).to.deep.include({
          lost: 0,
          duplicated: 0,
          unknown: 0,
          failedJobs: 0,
          trayMismatches: 0,
          unreadMismatches: 0,
          acknowledged: bodies.length,
        });
      } finally {
        await storage.close();
      }
    });
  });

  describe('when Redis is SIGKILLed during a burst while the worker runs, and restarted 1.5 s later', () => {
    const postgres = usePostgres();
    it('stores every acknowledged event exactly once and the tray equals the model', async () => {
      const prefix = useQueuePrefix();
      const target: StorageTarget = { engine: 'postgres', url: postgres.url };
      const storage = await openTargetStorage(target);
      try {
        const receiver = await stage.startReceiver(prefix);
        const tray = await stage.startTray({ storage: target, prefix, env: trayEnv });
        const bodies = socialBurstBodies('e2e-redis-kill', burstSize);
        const outage = outageAfterAcks({
          acks: burstSize * 0.3,
          downMs: 1_500,
          stop: stage.killRedis,
          start: stage.startRedis,
        });
        const started = performance.now();
        const deliveries = await sendBurst({
          urls: [receiver.url],
          secret: faultSecret,
          bodies,
          concurrency: 16,
          onAck: outage.onAck,
          settleLeading: leadingProcessed(stage.redis.url, prefix, [receiver.port]),
        });
        await outage.done();
        await waitUntilDrained(receiver.port);
        await waitUntilQueueEmpty(stage.redis.url, prefix, 480_000);
        const endToEndMs = performance.now() - started;

        const { ledger, firstMismatches } = await readEndToEndLedger(storage, bodies, deliveries, tray.port);
        const figures = {
          sent: deliveries.length,
          statuses: tally(deliveries.map((d) => d.status)),
          ...ledger,
          acceptedViaSpool: await metricValue(receiver.port, 'webhook_accepted_total', 'stored_in="spool"'),
          failedJobs: (await queueCounts(stage.redis.url, prefix)).failed,
          recoveredStalledJobs: await recoveredStalledJobs(stage.redis.url, prefix),
          ackLatencyMs: latencySummary(deliveries.filter((d) => d.status === 200).map((d) => d.ms)),
          endToEndMs: Math.round(endToEndMs),
        };
        reportFigures('e2e redis SIGKILL with the worker running', figures);
        // The outage was felt: the receiver took part of the burst through its spool.
        expect(figures.acceptedViaSpool, 'events that went through the spool').to.be.above(0);
        expect(firstMismatches, 'tray records differing from the model').to.deep.equal([]);
        expect(figures).to.deep.include({
          lost: 0,
          duplicated: 0,
          unknown: 0,
          failedJobs: 0,
          trayMismatches: 0,
          unreadMismatches: 0,
          acknowledged: burstSize,
          storedInEvents: burstSize,
        });
      } finally {
        await storage.close();
      }
    });
  });
});
