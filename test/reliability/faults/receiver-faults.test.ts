import { expect } from 'chai';
import { connectMongo } from '../../../shared/mongo/connect-mongo.ts';
import { uniqueName, useQueuePrefix } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import { sendBurst, type Delivery } from '../support/burst.ts';
import {
  readEndToEndLedger,
  recoveredStalledJobs,
  waitUntilQueueEmpty,
} from '../support/end-to-end-ledger.ts';
import { leadingProcessed } from '../support/leading-processed.ts';
import { queueCounts } from '../support/queue-counts.ts';
import { outageAfterAcks } from '../support/outage-after-acks.ts';
import { checkLedger, readQueueLedger } from '../support/queue-ledger.ts';
import { faultSecret, metricValue, waitUntilDrained } from '../support/receiver-process.ts';
import { latencySummary, reportFigures, tally } from '../support/report-figures.ts';
import { socialBurstBodies } from '../support/social-burst.ts';
import { withTargetStorage } from '../support/storage-target.ts';
import { useFaultStage } from '../support/fault-stage.ts';

/** The platform's deadline for an answer (docs/contract.md#answer). */
const ackDeadlineMs = 1_500;
const burstSize = Number(process.env.RELIABILITY_BURST ?? 2_000);

/** Figures of a burst; acknowledged = answered 200. */
function summarise(deliveries: readonly Delivery[]) {
  const acked = new Set(deliveries.filter((d) => d.status === 200).map((d) => d.id));
  const ackMs = deliveries.filter((d) => d.status === 200).map((d) => d.ms);
  return { acked, statuses: tally(deliveries.map((d) => d.status)), ackLatencyMs: latencySummary(ackMs) };
}

describe('faults on the receiver path (real processes, ledger check on the queue; with a worker, on events and tray)', function () {
  this.timeout(900_000);
  const stage = useFaultStage('faults', 'each');

  describe('when Redis is SIGKILLed during a burst of signed deliveries and restarted 1.5 s later', () => {
    it('answers every delivery 200 within 1.5 s and then holds every acknowledged event in the queue exactly once', async () => {
      const prefix = useQueuePrefix();
      const receiver = await stage.startReceiver(prefix);
      const outage = outageAfterAcks({
        acks: burstSize * 0.3,
        downMs: 1_500,
        stop: stage.killRedis,
        start: stage.startRedis,
      });
      const deliveries = await sendBurst({
        urls: [receiver.url],
        secret: faultSecret,
        count: burstSize,
        concurrency: 16,
        tag: 'redis-kill',
        onAck: outage.onAck,
      });
      await outage.done();
      const drainMs = await waitUntilDrained(receiver.port);
      const spooled = await metricValue(receiver.port, 'webhook_accepted_total', 'stored_in="spool"');
      const { acked, statuses, ackLatencyMs } = summarise(deliveries);
      const ledger = checkLedger(
        await readQueueLedger(stage.redis.url, prefix),
        deliveries.map((d) => d.id),
        acked,
      );
      reportFigures('redis SIGKILL during burst', {
        sent: deliveries.length,
        statuses,
        ...ledger,
        acceptedViaSpool: spooled,
        ackLatencyMs,
        drainAfterBurstMs: Math.round(drainMs),
      });
      expect(statuses).to.deep.equal({ 200: burstSize });
      expect(spooled, 'events that went through the spool').to.be.above(0);
      expect(ledger).to.deep.include({ lost: 0, duplicated: 0, unknown: 0, storedAcknowledged: burstSize });
      expect(ackLatencyMs.max, 'slowest acknowledgement in ms').to.be.below(ackDeadlineMs);
    });
  });

  describe('when the receiver is SIGKILLed during a burst while Redis is down (spool filling), then restarted, with a tray-service process running', () => {
    it('the new process drains the spool; every acknowledged event is queued once, stored in events once, and the tray equals the model', async () => {
      const prefix = useQueuePrefix();
      const dbName = uniqueName('rkill');
      const { client, db } = await connectMongo(testStack().mongoUri, dbName, { appName: 'reliability' });
      try {
        // The worker starts first (it checks Redis at start-up) and keeps running through the fault.
        const tray = await stage.startTray({ mongoUri: testStack().mongoUri, db: dbName, prefix });
        const first = await stage.startReceiver(prefix);
        const bodies = socialBurstBodies('receiver-kill', Math.round(burstSize / 2));
        let killed: Promise<void> | undefined;
        const deliveries = await sendBurst({
          urls: [first.url],
          secret: faultSecret,
          bodies,
          concurrency: 16,
          // The leaves are processed with Redis up; everything after them fills the spool.
          settleLeading: async () => {
            await leadingProcessed(stage.redis.url, prefix, [first.port])();
            await stage.killRedis();
          },
          onAck: (acked) => {
            if (!killed && acked >= burstSize / 4) killed = first.kill();
          },
        });
        await killed;
        await stage.startRedis();
        // The same spool and port: the restarted receiver drains what the first one spooled.
        const second = await stage.startReceiver(prefix, 'spool', first.port);
        const drainMs = await waitUntilDrained(second.port);
        const queueEmptyMs = await waitUntilQueueEmpty(stage.redis.url, prefix, 480_000);
        const { acked, statuses, ackLatencyMs } = summarise(deliveries);
        // Read once the worker is done: jobs move between bull's lists while it runs.
        const queue = checkLedger(
          await readQueueLedger(stage.redis.url, prefix),
          deliveries.map((d) => d.id),
          acked,
        );
        const { ledger, firstMismatches } = await withTargetStorage(
          { engine: 'mongodb', uri: testStack().mongoUri, db: dbName },
          (storage) => readEndToEndLedger(storage, bodies, deliveries, tray.port),
        );
        const figures = {
          sent: deliveries.length,
          statuses,
          queue,
          ...ledger,
          failedJobs: (await queueCounts(stage.redis.url, prefix)).failed,
          recoveredStalledJobs: await recoveredStalledJobs(stage.redis.url, prefix),
          trayProcessAlive: tray.child.exitCode === null && tray.child.signalCode === null,
          ackLatencyMs,
          drainAfterRestartMs: Math.round(drainMs),
          queueEmptyAfterDrainMs: Math.round(queueEmptyMs),
        };
        reportFigures('receiver SIGKILL with a filling spool, worker running', figures);
        expect(acked.size, 'acknowledged before the kill').to.be.at.least(burstSize / 4);
        expect(queue).to.deep.include({ lost: 0, duplicated: 0, unknown: 0, storedAcknowledged: acked.size });
        expect(firstMismatches, 'tray records differing from the model').to.deep.equal([]);
        expect(figures).to.deep.include({
          lost: 0,
          duplicated: 0,
          unknown: 0,
          failedJobs: 0,
          trayMismatches: 0,
          unreadMismatches: 0,
          trayProcessAlive: true,
          // Every job the queue holds (acknowledged or not) reached the events store, and only those.
          storedInEvents: queue.storedAcknowledged + queue.storedUnacknowledged,
        });
      } finally {
        await db.dropDatabase().catch(() => undefined);
        await client.close();
      }
    });
  });

  describe('with two receivers on the same Redis, each event delivered to both at once, and Redis SIGKILLed mid-way', () => {
    it('holds every acknowledged event exactly once (the dedupe key is the job id across instances)', async () => {
      const prefix = useQueuePrefix();
      const a = await stage.startReceiver(prefix, 'spool-a');
      const b = await stage.startReceiver(prefix, 'spool-b');
      const count = Math.round(burstSize / 2);
      const outage = outageAfterAcks({
        acks: count * 0.6,
        downMs: 1_500,
        stop: stage.killRedis,
        start: stage.startRedis,
      });
      const deliveries = await sendBurst({
        urls: [a.url, b.url],
        secret: faultSecret,
        count,
        concurrency: 8,
        tag: 'two-receivers',
        onAck: outage.onAck,
      });
      await outage.done();
      await Promise.all([waitUntilDrained(a.port), waitUntilDrained(b.port)]);
      const { acked, statuses, ackLatencyMs } = summarise(deliveries);
      const ledger = checkLedger(
        await readQueueLedger(stage.redis.url, prefix),
        deliveries.map((d) => d.id),
        acked,
      );
      const droppedAsDuplicate =
        (await metricValue(a.port, 'webhook_dropped_total', 'reason="duplicate"')) +
        (await metricValue(b.port, 'webhook_dropped_total', 'reason="duplicate"'));
      reportFigures('two receivers, same events, redis SIGKILL', {
        events: count,
        requests: deliveries.length,
        statuses,
        ...ledger,
        droppedAsDuplicate,
        ackLatencyMs,
      });
      expect(statuses).to.deep.equal({ 200: count * 2 });
      expect(ledger).to.deep.include({ lost: 0, duplicated: 0, unknown: 0, storedAcknowledged: count });
      expect(ackLatencyMs.max, 'slowest acknowledgement in ms').to.be.below(ackDeadlineMs);
    });
  });
});
