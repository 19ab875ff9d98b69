import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startFerret, startRedis, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import { connectMongo } from '../../../shared/mongo/connect-mongo.ts';
import { testPostgres } from '../../support/test-stack.ts';
import { uniqueName, useQueuePrefix } from '../../support/suite-resources.ts';
import { useStoppablePostgres } from '../../support/use-stoppable-postgres.ts';
import { attemptsSpent } from '../support/attempts-spent.ts';
import { sendBurst } from '../support/burst.ts';
import { readEndToEndLedger, waitUntilQueueEmpty } from '../support/end-to-end-ledger.ts';
import { outageAfterAcks } from '../support/outage-after-acks.ts';
import { queueCounts } from '../support/queue-counts.ts';
import { faultSecret, startReceiverProcess, waitUntilDrained } from '../support/receiver-process.ts';
import { latencySummary, reportFigures, tally } from '../support/report-figures.ts';
import { socialBurstBodies } from '../support/social-burst.ts';
import { withTargetStorage, type StorageTarget } from '../support/storage-target.ts';
import { startTrayProcess, type TrayProcess } from '../support/tray-process.ts';
import type { ReceiverProcess } from '../support/receiver-process.ts';

const count = Number(process.env.RELIABILITY_RETRY_WINDOW_BURST ?? 800);
/** 50 ms doubling to at most 100 ms: a job's 20 attempts would all be spent within about 2 s. */
const shortRetries = { TRAY_RETRY_FIRST_DELAY_MS: '50', TRAY_RETRY_MAX_DELAY_MS: '100' };
const retryWindowMs = 50 + 18 * 100;
/** The outage: three retry windows and more. */
const downMs = Number(process.env.RELIABILITY_RETRY_WINDOW_DOWN_MS ?? 7_000);

interface StoppedDatabase {
  readonly name: string;
  target(): StorageTarget;
  stop(): Promise<void>;
  start(): Promise<void>;
}

const logLines = (tray: TrayProcess, text: string) => tray.output().split(text).length - 1;

describe('the database down for longer than a job retry window, under load', function () {
  this.timeout(600_000);
  let dir: string;
  let redis: LocalServer;
  const processes: (ReceiverProcess | TrayProcess)[] = [];
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'reliability-window-'));
    redis = await startRedis({ dir: join(dir, 'redis'), persistent: true });
  });
  afterEach(async () => {
    for (const child of processes.splice(0)) await child.kill();
  });
  after(async () => {
    await redis.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  describe('on PostgreSQL (the default storage)', () => {
    const postgres = useStoppablePostgres();
    it('puts no job in the failed set, counts no failed attempt, loses nothing, and the tray equals the model', () =>
      scenario({
        name: 'PostgreSQL',
        target: () => ({ engine: 'postgres', url: postgres.url }),
        stop: () => postgres.stop(),
        start: () => postgres.start(),
      }));
  });

  describe('on the MongoDB adapter (FerretDB)', () => {
    let ferret: LocalServer;
    let ferretPort: number;
    const dbName = uniqueName('window');
    const startOwnFerret = async () => {
      ferret = await startFerret({
        dir: join(dir, 'ferret'),
        port: ferretPort,
        postgresUrl: (await testPostgres()).ferretUrl,
      });
    };
    before(async () => {
      ferretPort = await freePort();
      await startOwnFerret();
    });
    after(async () => {
      const { client, db } = await connectMongo(ferret.url, dbName, { appName: 'reliability' });
      await db.dropDatabase().catch(() => undefined);
      await client.close();
      await ferret.stop('SIGKILL');
    });
    it('puts no job in the failed set, counts no failed attempt, loses nothing, and the tray equals the model', () =>
      scenario({
        name: 'FerretDB',
        target: () => ({ engine: 'mongodb', uri: ferret.url, db: dbName }),
        stop: () => ferret.stop(),
        start: startOwnFerret,
      }));
  });

  async function scenario(database: StoppedDatabase): Promise<void> {
    const prefix = useQueuePrefix();
    const receiver = await startReceiverProcess({
      redisUrl: redis.url,
      prefix,
      spoolDir: join(dir, `spool-${prefix}`),
    });
    processes.push(receiver);
    const tray = await startTrayProcess({
      redisUrl: redis.url,
      storage: database.target(),
      prefix,
      env: shortRetries,
    });
    processes.push(tray);

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
    });
    await outage.done();
    await waitUntilDrained(receiver.port);
    await waitUntilQueueEmpty(redis.url, prefix, 300_000);

    const { ledger, firstMismatches } = await withTargetStorage(database.target(), (storage) =>
      readEndToEndLedger(storage, bodies, deliveries, tray.port),
    );
    const counts = await queueCounts(redis.url, prefix);
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
        redis.url,
        prefix,
        bodies.map((body) => body.id),
      ),
      failedAttemptsLogged: logLines(tray, 'job failed'),
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
      attemptsSpent: 0,
      failedAttemptsLogged: 0,
      trayMismatches: 0,
      unreadMismatches: 0,
    });
    // The worker noticed the outage (it was felt) and its end, each logged once or a few times.
    expect(figures.outagesLogged).to.be.at.least(1);
    expect(figures.recoveriesLogged).to.equal(figures.outagesLogged);
  }
});
