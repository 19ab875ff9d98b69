import { expect } from 'chai';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { attemptsSpent } from '../support/attempts-spent.ts';
import { sendBurst } from '../support/burst.ts';
import { readEndToEndLedger, waitUntilQueueEmpty } from '../support/end-to-end-ledger.ts';
import { leadingProcessed } from '../support/leading-processed.ts';
import { outageAfterAcks } from '../support/outage-after-acks.ts';
import { queueCounts } from '../support/queue-counts.ts';
import { faultSecret, waitUntilDrained } from '../support/receiver-process.ts';
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

const count = Number(process.env.RELIABILITY_RETRY_WINDOW_BURST ?? 800);
/** 50 ms doubling to at most 100 ms: a job's 20 attempts would all be spent within about 2 s. */
const shortRetries = { TRAY_RETRY_FIRST_DELAY_MS: '50', TRAY_RETRY_MAX_DELAY_MS: '100' };
const retryWindowMs = 50 + 18 * 100;
/** The outage: three retry windows and more. */
const downMs = Number(process.env.RELIABILITY_RETRY_WINDOW_DOWN_MS ?? 7_000);

const logLines = (tray: TrayProcess, text: string) => tray.output().split(text).length - 1;

/** Log lines between the worker's "storage does not answer" and its "storage answers again". */
function whileWaiting(tray: TrayProcess): string[] {
  let waiting = false;
  return tray
    .output()
    .split('\n')
    .filter((line) => {
      if (line.includes('storage does not answer')) waiting = true;
      if (line.includes('storage answers again')) waiting = false;
      return waiting;
    });
}

/** Why attempts failed (each "job failed" line's error, first 60 characters), tallied. */
const failureReasons = (tray: TrayProcess) =>
  tray
    .output()
    .split('\n')
    .filter((line) => line.includes('job failed'))
    .map((line) => /"err":"([^"]{0,60})/.exec(line)?.[1] ?? 'no err');

describe('the database down for longer than a job retry window, under load', function () {
  this.timeout(600_000);
  const stage = useFaultStage('window', 'all', { redis: 'volatile' });

  describe('on PostgreSQL (the default storage)', () => {
    const postgres = useStoppablePostgresDatabase();
    it('puts no job in the failed set, counts no failed attempt, loses nothing, and the tray equals the model', () =>
      scenario(postgres));
  });

  describe('on the MongoDB adapter (FerretDB)', () => {
    const ferret = useStoppableFerret(() => stage.dir, 'window');
    it('puts no job in the failed set, counts no failed attempt, loses nothing, and the tray equals the model', () =>
      scenario(ferret));
  });

  async function scenario(database: StoppedDatabase): Promise<void> {
    const prefix = useQueuePrefix();
    const receiver = await stage.startReceiver(prefix, `spool-${prefix}`);
    const tray = await stage.startTray({ storage: database.target(), prefix, env: shortRetries });

    const bodies = socialBurstBodies(`window-${database.name}`, count);
    const outage = outageAfterAcks({
      acks: count * 0.3,
      downMs,
      stop: () => database.stop(),
      start: () => database.start(),
    });
    const deliveries = await sendBurst({
      urls: [receiver.url],
      secret: faultSecret,
      bodies,
      concurrency: 4,
      onAck: outage.onAck,
      settleLeading: leadingProcessed(stage.redis.url, prefix, [receiver.port]),
    });
    await outage.done();
    await waitUntilDrained(receiver.port);
    await waitUntilQueueEmpty(stage.redis.url, prefix, 300_000);

    const { ledger, firstMismatches } = await withTargetStorage(database.target(), (storage) =>
      readEndToEndLedger(storage, bodies, deliveries, tray.port),
    );
    const counts = await queueCounts(stage.redis.url, prefix);
    const figures = {
      storage: database.name,
      events: count,
      statuses: tally(deliveries.map((d) => d.status)),
      ...ledger,
      retryWindowMs,
      databaseDownForMs: outage.downForMs(),
      failedJobs: counts.failed,
      // bull's own count, from every job's hash: attempts the outage cost.
      attemptsSpent: await attemptsSpent(
        stage.redis.url,
        prefix,
        bodies.map((body) => body.id),
      ),
      failedAttemptsLogged: logLines(tray, 'job failed'),
      failedAttemptsWhileWaiting: whileWaiting(tray).filter((line) => line.includes('job failed')).length,
      failureReasons: tally(failureReasons(tray)),
      outagesLogged: logLines(tray, 'storage does not answer'),
      recoveriesLogged: logLines(tray, 'storage answers again'),
      ackLatencyMs: latencySummary(deliveries.filter((d) => d.status === 200).map((d) => d.ms)),
    };
    reportFigures(`${database.name} down ${downMs} ms, past a ${retryWindowMs} ms retry window`, figures);
    expect(figures.databaseDownForMs, 'the outage outlasted the retry window').to.be.above(retryWindowMs * 3);
    expect(firstMismatches, 'tray records differing from the model').to.deep.equal([]);
    expect(figures).to.deep.include({
      acknowledged: count,
      lost: 0,
      duplicated: 0,
      unknown: 0,
      failedJobs: 0,
      failedAttemptsWhileWaiting: 0,
      trayMismatches: 0,
      unreadMismatches: 0,
    });
    // Every attempt bull counted is one the worker logged, with its reason, outside the wait: on
    // PostgreSQL none at all; FerretDB may fail a few just after it is back, for a reason of the
    // job's own (a record still contended after its compare-and-set rounds, say), as without any
    // outage.
    expect(figures.attemptsSpent, 'attempts spent = attempts logged').to.equal(figures.failedAttemptsLogged);
    if (database.name === 'PostgreSQL') expect(figures.attemptsSpent, 'attempts spent').to.equal(0);
    // The worker noticed the outage (it was felt) and its end, each logged once or a few times.
    expect(figures.outagesLogged).to.be.at.least(1);
    expect(figures.recoveriesLogged).to.equal(figures.outagesLogged);
  }
});
