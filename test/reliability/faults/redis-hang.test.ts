import { expect } from 'chai';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { checkLedger, readQueueLedger } from '../support/queue-ledger.ts';
import { faultSecret, waitUntilDrained } from '../support/receiver-process.ts';
import { latencySummary, reportFigures, tally } from '../support/report-figures.ts';
import { growthMb, sampleRssEverySecond } from '../support/rss-series.ts';
import { socialBurstBodies } from '../support/social-burst.ts';
import { sendAtSteadyRate } from '../support/steady-rate.ts';
import { useFaultStage } from '../support/fault-stage.ts';

/** How long Redis hangs (45 s in CI): its thirds must outlast the heap settling on the spool path. */
const hangS = Number(process.env.RELIABILITY_HANG_S ?? 45);
const perSecond = 400;
const warmS = 3;
const afterS = 3;
/** No growth of the receiver's RSS from the hang's first third to its last beyond this. */
const growthBoundMb = 20;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Redis hanging (SIGSTOP: connections open, nothing answered) under a steady load (a real receiver process)', function () {
  this.timeout((hangS + 240) * 1_000);
  // SIGSTOP and SIGCONT: Redis keeps its memory, so no file is needed.
  const stage = useFaultStage('hang', 'each', { redis: 'volatile' });

  it('answers every event 200 from the spool, keeps its memory flat for the whole hang, and afterwards holds every event exactly once', async () => {
    const prefix = useQueuePrefix();
    const receiver = await stage.startReceiver(prefix);
    const bodies = socialBurstBodies('redis-hang', (warmS + hangS + afterS) * perSecond);
    let hang: Promise<number[]> | undefined;
    const deliveries = await sendAtSteadyRate(bodies, {
      urls: [receiver.url],
      secret: faultSecret,
      perSecond,
      // Only the queue is checked here, not the tray: nothing waits for the leaves.
      settleLeading: null,
      onStarted: (index) => {
        if (index !== warmS * perSecond) return;
        hang = (async () => {
          stage.redis.process.kill('SIGSTOP');
          const rss = sampleRssEverySecond(receiver.child.pid!);
          try {
            await sleep(hangS * 1_000);
          } finally {
            stage.redis.process.kill('SIGCONT');
          }
          return rss.finish();
        })();
      },
    });
    if (!hang) throw new Error('the hang never began');
    const rss = await hang;
    await waitUntilDrained(receiver.port, 120_000);
    const acked = new Set(deliveries.filter((d) => d.status === 200).map((d) => d.id));
    const ledger = checkLedger(
      await readQueueLedger(stage.redis.url, prefix),
      bodies.map((body) => body.id),
      acked,
    );
    const output = receiver.output();
    const figures = {
      hangS,
      events: bodies.length,
      statuses: tally(deliveries.map((d) => d.status)),
      ...ledger,
      rssMb: { start: rss[0], peak: Math.max(...rss), growth: growthMb(rss) },
      // Each step of the hang logged once, not once per event.
      hangLogLines: output.split('did not answer within the budget').length - 1,
      reconnectLogLines: output.split('dropping the connection').length - 1,
      ackLatencyMs: latencySummary(deliveries.filter((d) => d.status === 200).map((d) => d.ms)),
    };
    reportFigures(`Redis hanging ${hangS} s under ${perSecond} events/s`, figures);
    expect(figures.statuses, 'answers').to.deep.equal({ 200: bodies.length });
    expect(figures.ackLatencyMs.max, 'slowest answer (ms)').to.be.below(1_500);
    expect(figures.rssMb.growth, 'receiver RSS growth during the hang (MB)').to.be.at.most(growthBoundMb);
    expect(figures.reconnectLogLines, 'connections dropped during the hang').to.be.at.least(1);
    expect(ledger).to.deep.include({
      acknowledged: bodies.length,
      storedAcknowledged: bodies.length,
      lost: 0,
      duplicated: 0,
      unknown: 0,
    });
  });
});
