import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startRedis, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { sendBurst, type Delivery } from '../support/burst.ts';
import { checkLedger, readQueueLedger } from '../support/queue-ledger.ts';
import {
  faultSecret,
  metricValue,
  startReceiverProcess,
  waitUntilDrained,
  type ReceiverProcess,
} from '../support/receiver-process.ts';
import { latencySummary, reportFigures, tally } from '../support/report-figures.ts';

/** The platform's deadline for an answer (platform document, section 4.3). */
const ackDeadlineMs = 1_500;
const burstSize = Number(process.env.RELIABILITY_BURST ?? 2_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Figures of a burst; acknowledged = answered 200. */
function summarise(deliveries: readonly Delivery[]) {
  const acked = new Set(deliveries.filter((d) => d.status === 200).map((d) => d.id));
  const ackMs = deliveries.filter((d) => d.status === 200).map((d) => d.ms);
  return { acked, statuses: tally(deliveries.map((d) => d.status)), ackLatencyMs: latencySummary(ackMs) };
}

describe('faults on the receiver path (real processes, ledger check on the queue)', function () {
  this.timeout(300_000);
  let dir: string;
  let redisPort: number;
  let redis: LocalServer;
  const receivers: ReceiverProcess[] = [];
  const redisDir = () => join(dir, 'redis');
  const startOwnRedis = async () => {
    redis = await startRedis({ dir: redisDir(), port: redisPort, persistent: true });
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'reliability-faults-'));
    redisPort = await freePort();
    await startOwnRedis();
  });
  afterEach(async () => {
    for (const receiver of receivers.splice(0)) await receiver.kill();
    await redis.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  describe('when Redis is SIGKILLed during a burst of signed deliveries and restarted 1.5 s later', () => {
    it('answers every delivery 200 within 1.5 s and then holds every acknowledged event in the queue exactly once', async () => {
      const prefix = useQueuePrefix();
      const receiver = await startReceiverProcess({
        redisUrl: redis.url,
        prefix,
        spoolDir: join(dir, 'spool'),
      });
      receivers.push(receiver);
      let fault: Promise<void> | undefined;
      const deliveries = await sendBurst({
        urls: [receiver.url],
        secret: faultSecret,
        count: burstSize,
        concurrency: 16,
        tag: 'redis-kill',
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
      const drainMs = await waitUntilDrained(receiver.port);
      const spooled = await metricValue(receiver.port, 'webhook_accepted_total', 'stored_in="spool"');
      const { acked, statuses, ackLatencyMs } = summarise(deliveries);
      const ledger = checkLedger(
        await readQueueLedger(redis.url, prefix),
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

  describe('when the receiver is SIGKILLed during a burst while Redis is down (spool filling), then restarted', () => {
    it('the new process drains the spool and every acknowledged event is queued exactly once', async () => {
      const prefix = useQueuePrefix();
      const spoolDir = join(dir, 'spool');
      const first = await startReceiverProcess({ redisUrl: redis.url, prefix, spoolDir });
      receivers.push(first);
      await redis.stop('SIGKILL');
      let killed: Promise<void> | undefined;
      const deliveries = await sendBurst({
        urls: [first.url],
        secret: faultSecret,
        count: Math.round(burstSize / 2),
        concurrency: 16,
        tag: 'receiver-kill',
        onAck: (acked) => {
          if (!killed && acked >= burstSize / 4) killed = first.kill();
        },
      });
      await killed;
      await startOwnRedis();
      const second = await startReceiverProcess({ redisUrl: redis.url, prefix, spoolDir, port: first.port });
      receivers.push(second);
      const drainMs = await waitUntilDrained(second.port);
      const { acked, statuses, ackLatencyMs } = summarise(deliveries);
      const ledger = checkLedger(
        await readQueueLedger(redis.url, prefix),
        deliveries.map((d) => d.id),
        acked,
      );
      reportFigures('receiver SIGKILL with a filling spool', {
        sent: deliveries.length,
        statuses,
        ...ledger,
        ackLatencyMs,
        drainAfterRestartMs: Math.round(drainMs),
      });
      expect(acked.size, 'acknowledged before the kill').to.be.at.least(burstSize / 4);
      expect(ledger).to.deep.include({ lost: 0, duplicated: 0, unknown: 0, storedAcknowledged: acked.size });
    });
  });

  describe('with two receivers on the same Redis, each event delivered to both at once, and Redis SIGKILLed mid-way', () => {
    it('holds every acknowledged event exactly once (the dedupe key is the job id across instances)', async () => {
      const prefix = useQueuePrefix();
      const a = await startReceiverProcess({ redisUrl: redis.url, prefix, spoolDir: join(dir, 'spool-a') });
      const b = await startReceiverProcess({ redisUrl: redis.url, prefix, spoolDir: join(dir, 'spool-b') });
      receivers.push(a, b);
      let fault: Promise<void> | undefined;
      const count = Math.round(burstSize / 2);
      const deliveries = await sendBurst({
        urls: [a.url, b.url],
        secret: faultSecret,
        count,
        concurrency: 8,
        tag: 'two-receivers',
        onAck: (acked) => {
          if (fault || acked < count * 0.6) return;
          fault = (async () => {
            await redis.stop('SIGKILL');
            await sleep(1_500);
            await startOwnRedis();
          })();
        },
      });
      await fault;
      await Promise.all([waitUntilDrained(a.port), waitUntilDrained(b.port)]);
      const { acked, statuses, ackLatencyMs } = summarise(deliveries);
      const ledger = checkLedger(
        await readQueueLedger(redis.url, prefix),
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
