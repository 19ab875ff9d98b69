import { stallJob } from '../../support/stall-job.ts';
import { expect } from 'chai';
import type Bull from 'bull';
import BullModule from 'bull';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createMetricsRegistry } from '../../../shared/http/metrics-router.ts';
import {
  createWebhookQueue,
  WEBHOOK_MAX_STALLED_COUNT,
  webhookJobOptions,
  type WebhookJobData,
} from '../../../shared/queue/webhook-queue.ts';
import {
  startWorker,
  WORKER_OUTAGE_RETRIES,
  type RunningWorker,
} from '../../../tray-service/worker/start-worker.ts';
import { recordingLogger } from '../../support/recording-logger.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import { useStoppablePostgres } from '../../support/use-stoppable-postgres.ts';
import type { TrayStorage } from '../../../tray-service/storage/port.ts';
import { usePostgres } from '../../support/use-postgres.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { startFerretOnPostgres, type FerretOnPostgres } from '../../../scripts/lib/local-servers.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { EVENTS } from '../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { openMongoStorage } from '../../../tray-service/storage/mongodb/open-mongo-storage.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { waitFor } from '../../support/wait-for.ts';
import { commentEvent, membershipEvent, minute, postEvent } from './event-builder.ts';
import { jobDataOf, quietWorker, readAll, withMethod } from './worker-harness.ts';
import type { BullQueue } from '../../../shared/queue/create-bull-queue.ts';

/** Resolves once the job reached a final state (completed, or failed with no attempt left). */
async function settled(job: Bull.Job<WebhookJobData>): Promise<string> {
  return job.finished().then(
    () => 'completed',
    () => 'failed',
  );
}

/**
 * Adds a comment's job with 3 attempts 200 ms apart (before the storage gate, all three failed
 * within a second) and checks 2 s later that the worker holds it, active, with no attempt spent.
 */
async function addHeldJob(
  queue: BullQueue<WebhookJobData>,
  commentId: string,
): Promise<Bull.Job<WebhookJobData>> {
  const job = await queue.add(jobDataOf(commentEvent({ commentId })), {
    ...webhookJobOptions,
    attempts: 3,
    backoff: { type: 'exponential', delay: 200 },
  });
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const waiting = await queue.getJob(job.id);
  expect(await waiting?.getState()).to.equal('active');
  expect(waiting?.attemptsMade).to.equal(0);
  return job;
}

describe('tray worker when its database is unavailable', () => {
  const prefix = useQueuePrefix();
  const postgres = useStoppablePostgres();
  let storage: TrayStorage | undefined;
  let queue: BullQueue<WebhookJobData> | undefined;
  let worker: RunningWorker | undefined;
  const registry = createMetricsRegistry('test', false);
  const gateOpen = async () =>
    (await registry.getSingleMetric('tray_worker_storage_gate_open')?.get())?.values[0]?.value;

  before(async function () {
    this.timeout(60_000);
    storage = await postgres.openStorage();
    queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    worker = await quietWorker(queue, storage, { registry });
  });
  after(async function () {
    this.timeout(30_000);
    await worker?.close();
  });

  it('holds the job without spending an attempt while the database is down, and applies it once it answers', async function () {
    this.timeout(120_000);
    expect(await gateOpen()).to.equal(1);
    await postgres.stop();
    const job = await addHeldJob(queue!, 'cm-down');
    // Held here, and said on /metrics: an operator sees which worker holds jobs it cannot run.
    expect(await gateOpen()).to.equal(0);

    await postgres.start();
    expect(await settled(job)).to.equal('completed');
    expect(await gateOpen()).to.equal(1);
    expect((await queue!.getJob(job.id))?.attemptsMade).to.equal(0);
    const records = await readAll(storage!, 'u-ana');
    expect(records.map((record) => [record.verb, record.targetId])).to.deep.equal([['comment', 'p-100']]);
  });
});

/**
 * A worker on the suite's own queue over a PostgreSQL of its own, its storage as `adapt` makes it,
 * logging to `recording` and counting in `registry`; closed after the suite.
 */
function useWorkerOver(adapt: (storage: TrayStorage) => TrayStorage = (storage) => storage) {
  const prefix = useQueuePrefix();
  const postgres = useStoppablePostgres();
  const suite = {
    queue: undefined as BullQueue<WebhookJobData> | undefined,
    registry: createMetricsRegistry('test', false),
    recording: recordingLogger(),
  };
  let worker: RunningWorker | undefined;
  before(async function () {
    this.timeout(60_000);
    const storage = await postgres.openStorage();
    suite.queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    worker = await startWorker({
      queue: suite.queue,
      networkId: 'default',
      storage: adapt(storage),
      logger: suite.recording.logger,
      registry: suite.registry,
      purgeIntervalMs: 0,
    });
  });
  after(async function () {
    this.timeout(30_000);
    await worker?.close();
  });
  return suite;
}

describe('tray worker when a job fails for a reason of its own (the database answers)', () => {
  // Storing the event fails while the server answers its ping: the job's failure, not an outage.
  const suite = useWorkerOver((storage) => ({
    ...storage,
    events: new Proxy(storage.events, {
      get: () => () => Promise.reject(new Error('refused by the test')),
    }),
    ping: () => storage.ping(),
  }));
  const { registry, recording } = suite;

  it('retries the job with backoff and keeps it in the failed set with its reason', async function () {
    this.timeout(60_000);
    const job = await suite.queue!.add(jobDataOf(commentEvent({ commentId: 'cm-own' })), {
      ...webhookJobOptions,
      attempts: 3,
      backoff: { type: 'exponential', delay: 200 },
    });
    expect(await settled(job)).to.equal('failed');
    const failed = await suite.queue!.getJob(job.id);
    expect(failed?.attemptsMade).to.equal(3);
    expect(failed?.failedReason).to.equal('refused by the test');
    // Exponential backoff: the second wait (400 ms) follows the first (200 ms).
    expect(failed!.finishedOn! - failed!.timestamp).to.be.at.least(600);
    // Two retried failures, then the last one, said apart (an alert waits on the last alone).
    const jobs = await registry.getSingleMetricAsString('tray_worker_jobs_total');
    expect(jobs).to.match(/tray_worker_jobs_total\{outcome="failed"[^}]*\} 2/);
    expect(jobs).to.match(/tray_worker_jobs_total\{outcome="dead_lettered"[^}]*\} 1/);
    // pino's level 50 is `error`.
    expect(recording.lines.filter((line) => line.level === 50).map((line) => line.msg)).to.deep.equal([
      'job failed on its last attempt: in the failed set, replayable',
    ]);
  });
});

// The job's effects are stored and the handler returned, but bull's write of its completion failed
// on Redis (a command timing out, a reconnect): bull moves the job to the failed set with that
// error. On its last attempt nothing said so: no log line, no dead-letter count.
describe('tray worker when bull cannot record a finished job’s completion', () => {
  const suite = useWorkerOver();
  const { registry, recording } = suite;
  const jobPrototype = (BullModule as unknown as { Job: { prototype: Bull.Job } }).Job.prototype;
  const moveToCompleted = jobPrototype.moveToCompleted;
  after(() => {
    jobPrototype.moveToCompleted = moveToCompleted;
  });

  it('logs the job in the failed set on its last attempt, counted once completed and once unrecorded', async function () {
    this.timeout(60_000);
    jobPrototype.moveToCompleted = function (
      this: Bull.Job,
      ...args: Parameters<Bull.Job['moveToCompleted']>
    ) {
      if (JSON.stringify(this.data).includes('cm-unrecorded'))
        return Promise.reject(new Error('Command timed out'));
      return moveToCompleted.apply(this, args);
    };
    const job = await suite.queue!.add(jobDataOf(commentEvent({ commentId: 'cm-unrecorded' })), {
      ...webhookJobOptions,
      attempts: 1,
    });
    expect(await settled(job)).to.equal('failed');
    // bull emits the job's `failed` here once its move is written, beside the queue's own notice.
    const errorLines = () => recording.lines.filter((line) => line.level === 50);
    await waitFor(() => errorLines().length > 0, 5_000, 'the error line');
    const errors = errorLines();
    const jobs = await registry.getSingleMetricAsString('tray_worker_jobs_total');
    expect(jobs).to.match(/tray_worker_jobs_total\{outcome="completed"[^}]*\} 1/);
    expect(jobs).to.match(/tray_worker_jobs_total\{outcome="completion_unrecorded"[^}]*\} 1/);
    // Not a dead letter to alert on: its effects are stored.
    expect(jobs).to.not.match(/outcome="dead_lettered"/);
    expect(errors.map((line) => line.msg)).to.deep.equal([
      'job finished, but its completion could not be recorded: in the failed set; its effects are stored, so a replay changes nothing',
    ]);
    expect(errors[0]).to.include({ err: 'Command timed out' });
  });
});

// After a failover behind one address, connections made before it reach the former primary, now a
// standby that answers every write with read_only_sql_transaction while it answers SELECT 1. Made
// here by setting the database read-only for new sessions and ending the open ones.
describe('tray worker when its database takes no writes (a standby after a failover)', () => {
  const prefix = useQueuePrefix();
  const postgres = useStoppablePostgres();
  let queue: BullQueue<WebhookJobData> | undefined;
  let worker: RunningWorker | undefined;
  let admin: pg.Client | undefined;

  const database = () => new URL(postgres.url).pathname.slice(1);
  /** Sets the database read-only for new sessions and ends every other session of it. */
  const readOnly = async () => {
    await admin!.query(`ALTER DATABASE "${database()}" SET default_transaction_read_only = on`);
    await admin!.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
  };

  before(async function () {
    this.timeout(60_000);
    const storage = await postgres.openStorage();
    admin = new pg.Client({ connectionString: postgres.url });
    // The suite's server stops in its own after hook, which may run before this suite's.
    admin.on('error', () => undefined);
    await admin.connect();
    queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    worker = await quietWorker(queue, storage, { storageProbe: { firstProbeMs: 100, maxProbeMs: 200 } });
  });
  after(async function () {
    this.timeout(30_000);
    await worker?.close();
    await admin?.end().catch(() => undefined);
  });

  it('holds the job without spending an attempt while writes are refused, and applies it once they pass', async function () {
    this.timeout(60_000);
    await readOnly();
    const job = await addHeldJob(queue!, 'cm-standby');
    // The address names a primary again: connections made from now on take writes (the worker's
    // read-only ones are not kept: nothing ends them here).
    await admin!.query(`ALTER DATABASE "${database()}" RESET default_transaction_read_only`);
    expect(await settled(job)).to.equal('completed');
    expect((await queue!.getJob(job.id))?.attemptsMade).to.equal(0);
  });
});

/**
 * A storage whose disk fills on demand, as the server reports it: a trigger raising disk_full on
 * every stored event, what PostgreSQL raises when it cannot extend the table's file (and FerretDB
 * passes on in its InternalError). On the MongoDB adapter, a FerretDB of the suite's own on a
 * PostgreSQL of its own, whose tables are FerretDB's (one per collection, named in its metadata).
 */
function useFillingDisk(engine: 'postgres' | 'mongodb') {
  const state = {
    storage: undefined as TrayStorage | undefined,
    fill: () =>
      admin!.query(
        `CREATE TRIGGER disk_full BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION disk_full()`,
      ),
    free: () => admin!.query(`DROP TRIGGER disk_full ON ${table}`),
  };
  let admin: pg.Client | undefined;
  let table = 'stored_events';
  let dir = '';
  let servers: FerretOnPostgres | undefined;
  const suite = engine === 'postgres' ? useTrayStorage('postgres') : undefined;
  before(async function () {
    this.timeout(120_000);
    if (suite) {
      state.storage = suite.storage;
      admin = new pg.Client({ connectionString: suite.env.DATABASE_URL });
    } else {
      dir = mkdtempSync(join(tmpdir(), 'tray-disk-full-'));
      servers = await startFerretOnPostgres({ dir });
      state.storage = await openMongoStorage(servers.ferret.url, 'diskfull', {
        appName: 'tests',
        logger: createLogger({ name: 'test', level: 'silent' }),
      });
      admin = new pg.Client({ connectionString: servers.postgres.url });
    }
    // The suite's database is dropped in an after hook that may run before this suite's.
    admin.on('error', () => undefined);
    await admin.connect();
    if (!suite) {
      const { rows } = await admin.query<{ table: string }>(
        `SELECT _jsonb->>'table' AS table FROM diskfull._ferretdb_database_metadata WHERE _jsonb->>'_id' = $1`,
        [EVENTS],
      );
      expect(rows).to.have.length(1);
      table = `diskfull."${rows[0]!.table}"`;
    }
    await admin.query(`CREATE FUNCTION disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full';
      END $$`);
  });
  after(async function () {
    this.timeout(30_000);
    await admin?.end().catch(() => undefined);
    if (servers) {
      await state.storage?.close();
      await servers.ferret.stop().catch(() => undefined);
      await servers.postgres.stop().catch(() => undefined);
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return state;
}

// A full disk lasts as long as an operator needs, and the ping (a read) passes meanwhile. Spending
// attempts after a minute of waits (PostgreSQL) or at once (FerretDB's InternalError was taken for
// the job's own), a job went to the failed set (20 attempts, 7 minutes in production), and with it
// the whole backlog.
for (const engine of ['postgres', 'mongodb'] as const)
  describe(`tray worker when its database answers but its disk is full (${engine})`, () => {
    const prefix = useQueuePrefix();
    const disk = useFillingDisk(engine);
    const registry = createMetricsRegistry('test', false);
    const log = recordingLogger();
    let queue: BullQueue<WebhookJobData> | undefined;
    let worker: RunningWorker | undefined;
    const gateOpen = async () =>
      (await registry.getSingleMetric('tray_worker_storage_gate_open')?.get())?.values[0]?.value;

    before(async function () {
      this.timeout(60_000);
      queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
      worker = await quietWorker(queue, disk.storage!, {
        storageBusyFirstWaitMs: 10,
        registry,
        logger: log.logger,
      });
    });
    // Registered after the disk's, so it runs first: the worker stops before its storage closes.
    after(async function () {
      this.timeout(30_000);
      await worker?.close();
    });

    it('holds its jobs for as long as writes fail so, takes no new ones meanwhile, and spends no attempt', async function () {
      this.timeout(60_000);
      await disk.fill();
      const job = await addHeldJob(queue!, 'cm-disk-full');
      const later = await queue!.add(jobDataOf(commentEvent({ commentId: 'cm-disk-full-later' })), {
        ...webhookJobOptions,
        attempts: 3,
        backoff: { type: 'exponential', delay: 200 },
      });
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(await (await queue!.getJob(job.id))?.getState()).to.equal('active');
      expect(['waiting', 'active']).to.include(await (await queue!.getJob(later.id))?.getState());
      expect((await queue!.getJob(later.id))?.attemptsMade).to.equal(0);
      expect(await gateOpen()).to.equal(0);
      expect(
        log.messages.filter((message) => message.startsWith('storage answers but refuses writes')),
      ).to.have.length(1);
      await disk.free();
      expect(await settled(job)).to.equal('completed');
      expect(await settled(later)).to.equal('completed');
      for (const done of [job, later]) expect((await queue!.getJob(done.id))?.attemptsMade).to.equal(0);
      expect(await gateOpen()).to.equal(1);
      expect(log.messages).to.include('storage takes writes again: the worker takes jobs again');
    });
  });

/**
 * A worker whose every `events.store` fails with `failure` (a real error of the test's PostgreSQL,
 * made by `provoke` on a connection of its own, of SQLSTATE `code`) while `failuresLeft` is above
 * 0, counting the calls in `stores`; the database itself answers throughout.
 */
function useStoreFailing(
  code: string,
  provoke: (client: pg.Client) => Promise<unknown>,
  more: Parameters<typeof quietWorker>[2] = {},
) {
  const prefix = useQueuePrefix();
  const suite = useTrayStorage('postgres');
  const shared = usePostgres();
  let worker: RunningWorker | undefined;
  const state = {
    queue: undefined as BullQueue<WebhookJobData> | undefined,
    prefix,
    failuresLeft: 0,
    stores: 0,
    /** The worker's shutdown, as a SIGTERM runs it. */
    close: async () => worker?.close(),
  };
  before(async () => {
    const client = new pg.Client({ connectionString: shared.url });
    await client.connect();
    let failure: Error | undefined;
    try {
      failure = await provoke(client).then(
        () => undefined,
        (error: unknown) => error as Error,
      );
    } finally {
      await client.end();
    }
    expect((failure as { code?: string } | undefined)?.code).to.equal(code);
    const queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    state.queue = queue;
    const { storage } = suite;
    const events = withMethod(storage.events, 'store', (store) => (...args) => {
      state.stores += 1;
      if (state.failuresLeft <= 0) return store(...args);
      state.failuresLeft -= 1;
      return Promise.reject(failure!);
    });
    worker = await quietWorker(queue, { ...storage, events, ping: () => storage.ping() }, more);
  });
  after(async function () {
    this.timeout(30_000);
    await worker?.close();
  });
  return state;
}

// A connection the pool made before a failover behind one address still reaches the former
// primary: its next write fails with read_only_sql_transaction, and it is dropped. The storage
// answers all along (the ping takes a fresh connection), so only the failure itself says that the
// job was not at fault. Made here with a real such failure, thrown by the first stores.
describe('tray worker when its connection alone fails while the database answers', () => {
  const failing = useStoreFailing('25006', async (client) => {
    await client.query('SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY');
    await client.query('CREATE TABLE never_made (id int)');
  });

  it('runs the job again on another connection without spending an attempt, once per failed connection', async function () {
    this.timeout(30_000);
    // A pool of 10 connections, every one made before the failover.
    failing.failuresLeft = 10;
    failing.stores = 0;
    const job = await failing.queue!.add(jobDataOf(commentEvent({ commentId: 'cm-stale-pool' })), {
      ...webhookJobOptions,
      attempts: 3,
      backoff: { type: 'fixed', delay: 10 },
    });
    expect(await settled(job)).to.equal('completed');
    expect((await failing.queue!.getJob(job.id))?.attemptsMade).to.equal(0);
    expect(failing.stores).to.equal(11);
  });

  it('but spends attempts on a job that fails so every time, so it cannot loop for ever', async function () {
    this.timeout(30_000);
    failing.failuresLeft = Number.POSITIVE_INFINITY;
    failing.stores = 0;
    const job = await failing.queue!.add(jobDataOf(commentEvent({ commentId: 'cm-always-lost' })), {
      ...webhookJobOptions,
      attempts: 2,
      backoff: { type: 'fixed', delay: 10 },
    });
    expect(await settled(job)).to.equal('failed');
    // Each attempt: the first run and 10 more on other connections.
    expect(failing.stores).to.equal(22);
    failing.failuresLeft = 0;
  });
});

/** The job a closing worker left: still active (to stall over to another worker), no attempt spent. */
async function expectLeftActive(prefix: string, jobId: Bull.JobId): Promise<void> {
  const probe = createWebhookQueue({ redis: testStack().redisUrl, prefix });
  try {
    const left = await probe.getJob(jobId);
    expect(await left?.getState()).to.equal('active');
    expect(left?.attemptsMade).to.equal(0);
  } finally {
    await probe.close();
  }
}

/** A real statement timeout (57014), as a lock storm gives a job's statements. */
const statementTimeout = async (client: pg.Client) => {
  await client.query('SET statement_timeout = 1');
  await client.query('SELECT pg_sleep(1)');
};

// A database that answers its ping (a read) but says "not now" to a job's statements: a statement
// timeout in a lock storm, a full disk. Each job spent an attempt at once and the whole backlog
// went to the failed set within minutes.
describe('tray worker when the database answers but says "not now" to a job (a statement timeout)', () => {
  const failing = useStoreFailing('57014', statementTimeout, { storageBusyFirstWaitMs: 10 });

  it('waits and runs the job again without spending an attempt', async function () {
    this.timeout(30_000);
    failing.failuresLeft = 4;
    failing.stores = 0;
    const job = await failing.queue!.add(jobDataOf(commentEvent({ commentId: 'cm-busy' })), {
      ...webhookJobOptions,
      attempts: 3,
      backoff: { type: 'fixed', delay: 10 },
    });
    expect(await settled(job)).to.equal('completed');
    expect((await failing.queue!.getJob(job.id))?.attemptsMade).to.equal(0);
    expect(failing.stores).to.equal(5);
  });

  it('but spends attempts on a job whose statements always run out of time, so it cannot wait for ever', async function () {
    this.timeout(30_000);
    failing.failuresLeft = Number.POSITIVE_INFINITY;
    failing.stores = 0;
    const job = await failing.queue!.add(jobDataOf(commentEvent({ commentId: 'cm-always-busy' })), {
      ...webhookJobOptions,
      attempts: 2,
      backoff: { type: 'fixed', delay: 10 },
    });
    expect(await settled(job)).to.equal('failed');
    // Each attempt: the first run and 6 more after waits.
    expect(failing.stores).to.equal(14);
    failing.failuresLeft = 0;
  });
});

// A rollout during a lock storm: the worker is told to stop while a job waits out a "not now" (up
// to 30 s a wait, six of them). The shutdown waited for the job's waits, past its 8 s deadline, and
// the process exited without closing its storage.
describe('tray worker closing while a job waits out a database that says "not now"', () => {
  const failing = useStoreFailing('57014', statementTimeout, { storageBusyFirstWaitMs: 10_000 });

  it('stops waiting for the job, which stays active to run again elsewhere without spending an attempt', async function () {
    this.timeout(30_000);
    failing.failuresLeft = Number.POSITIVE_INFINITY;
    const job = await failing.queue!.add(jobDataOf(commentEvent({ commentId: 'cm-busy-closing' })), {
      ...webhookJobOptions,
      attempts: 3,
    });
    await waitFor(() => failing.stores === 1, 10_000, 'the job’s first run');
    const started = performance.now();
    const outcome = await Promise.race([
      failing.close().then(() => 'closed'),
      sleep(5_000).then(() => 'still closing'),
    ]);
    expect(outcome).to.equal('closed');
    expect(performance.now() - started).to.be.below(3_000);
    expect(failing.stores).to.equal(1);
    await expectLeftActive(failing.prefix, job.id);
    failing.failuresLeft = 0;
  });
});

/**
 * A worker on `prefix` holding two jobs: one parked on a real statement timeout ("not now") and
 * one whose store takes `slowMs`, each seen running once before this resolves.
 */
async function parkedBesideSlow(
  storage: TrayStorage,
  databaseUrl: string,
  prefix: string,
  slowMs: number,
  more: Parameters<typeof quietWorker>[2] = {},
) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const failure = await statementTimeout(client).then(
    () => undefined,
    (error: unknown) => error as Error,
  );
  await client.end();
  expect((failure as { code?: string } | undefined)?.code).to.equal('57014');
  const queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
  const parked = jobDataOf(commentEvent({ commentId: `cm-parked-${prefix}` }));
  const slow = jobDataOf(commentEvent({ commentId: `cm-slow-${prefix}` }));
  const stores = { parked: 0, slow: 0 };
  const events = withMethod(storage.events, 'store', (store) => async (...args) => {
    if (args[0].key === parked.dedupeKey) {
      stores.parked += 1;
      throw failure!;
    }
    if (args[0].key === slow.dedupeKey) {
      stores.slow += 1;
      await sleep(slowMs);
    }
    return store(...args);
  });
  const worker = await quietWorker(
    queue,
    { ...storage, events, ping: () => storage.ping() },
    { storageBusyFirstWaitMs: 10_000, concurrency: 4, ...more },
  );
  const parkedJob = await queue.add(parked, { ...webhookJobOptions, attempts: 3 });
  const slowJob = await queue.add(slow, { ...webhookJobOptions, attempts: 3 });
  await waitFor(() => stores.parked === 1 && stores.slow === 1, 10_000, 'both jobs’ first runs');
  return { worker, stores, parkedJob, slowJob, slowKey: slow.dedupeKey };
}

// The same shutdown with a healthy job running beside the parked one: the parked job's wait ended
// the close by disconnecting the queue at once, and the healthy job, its store done a moment
// later, could not say it completed: it ran again after the restart.
describe('tray worker closing while one job waits out "not now" and another is still running', () => {
  const prefix = useQueuePrefix();
  const suite = useTrayStorage('postgres');
  const shared = usePostgres();
  let worker: RunningWorker | undefined;
  // The worker's close closes the queue it was given.
  after(async function () {
    this.timeout(30_000);
    await worker?.close();
  });

  it('waits for the running job to complete, then leaves the parked one active', async function () {
    this.timeout(30_000);
    const held = await parkedBesideSlow(suite.storage, shared.url, prefix, 1_500);
    worker = held.worker;
    const started = performance.now();
    await worker.close();
    worker = undefined;
    expect(performance.now() - started).to.be.below(5_000);
    const probe = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    try {
      expect(await (await probe.getJob(held.slowJob.id))?.getState()).to.equal('completed');
    } finally {
      await probe.close();
    }
    await expectLeftActive(prefix, held.parkedJob.id);
    expect(held.stores.parked).to.equal(1);
  });
});

// A job still writing when the wait for it ran out (5 s) went on after close() had resolved, and
// the shutdown then closed Redis and the storage under it: what it stored was never announced to
// the streams, and its rerun, finding it stored, announced nothing either.
describe('tray worker closing while one job waits out "not now" and another writes for longer than 5 s', () => {
  const prefix = useQueuePrefix();
  const suite = useTrayStorage('postgres');
  const shared = usePostgres();
  let worker: RunningWorker | undefined;
  after(async function () {
    this.timeout(30_000);
    await worker?.close();
  });

  it('resolves close() only once the writing job has finished and announced what it stored', async function () {
    this.timeout(30_000);
    const announced: string[] = [];
    const held = await parkedBesideSlow(suite.storage, shared.url, prefix, 6_500, {
      announce: async (event) => void announced.push(event.key),
    });
    worker = held.worker;
    await worker.close();
    worker = undefined;
    expect(announced).to.deep.equal([held.slowKey]);
  });
});

// The job duration histogram is the time spent applying the job: a worker waiting out a busy
// database between runs (or an outage at the gate) is not slow, and a minute-long observation per
// held job would put every processing alert off for long after the database is back.
describe('tray worker job duration while the database says "not now"', () => {
  const registry = createMetricsRegistry('test', false);
  const failing = useStoreFailing('57014', statementTimeout, { storageBusyFirstWaitMs: 500, registry });

  it('observes the runs of the job, not the waits between them', async function () {
    this.timeout(30_000);
    failing.failuresLeft = 3;
    const started = Date.now();
    const job = await failing.queue!.add(
      jobDataOf(commentEvent({ commentId: 'cm-timed' })),
      webhookJobOptions,
    );
    expect(await settled(job)).to.equal('completed');
    const elapsed = (Date.now() - started) / 1000;
    const text = await registry.getSingleMetricAsString('tray_worker_job_duration_seconds');
    const sum = Number(/tray_worker_job_duration_seconds_sum(?:\{[^}]*\})? (\S+)/.exec(text)?.[1]);
    // Waits of 0.5, 1 and 2 s: the job took at least 3.5 s end to end.
    expect(elapsed).to.be.at.least(3.5);
    expect(sum).to.be.greaterThan(0);
    expect(sum).to.be.below(elapsed - 3.5);
  });
});

// `docker compose down`: the worker is told to stop while it applies a job, and the database stops
// at the same moment. The job meets the outage after the stop: it stays active, to stall and run
// again elsewhere, and the close does not wait for it until the shutdown's deadline.
describe('tray worker closing while its database goes down', () => {
  const prefix = useQueuePrefix();
  const postgres = useStoppablePostgres();
  let queue: BullQueue<WebhookJobData> | undefined;
  let worker: RunningWorker | undefined;
  let storing: () => void = () => undefined;
  const stored = new Promise<void>((resolve) => (storing = resolve));
  let down = false;
  let release: (error: Error) => void = () => undefined;

  before(async function () {
    this.timeout(60_000);
    const storage = await postgres.openStorage();
    queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    // The event's store waits (the job in flight) until the test fails it, as a stopped server would.
    const events = withMethod(storage.events, 'store', () => () => {
      storing();
      return new Promise((_resolve, reject) => (release = reject));
    });
    const ping = () => (down ? Promise.reject(new Error('the database stopped')) : storage.ping());
    worker = await quietWorker(queue, { ...storage, events, ping });
  });

  it('stops waiting for the job once it meets the outage, which leaves it active to run again', async function () {
    this.timeout(30_000);
    const job = await queue!.add(jobDataOf(commentEvent({ commentId: 'cm-closing' })), webhookJobOptions);
    await stored;
    const closing = worker!.close();
    down = true;
    release(new Error('the database stopped'));
    const started = performance.now();
    const outcome = await Promise.race([
      closing.then(() => 'closed'),
      new Promise((resolve) => setTimeout(() => resolve('still closing'), 5_000)),
    ]);
    expect(outcome).to.equal('closed');
    expect(performance.now() - started).to.be.below(3_000);
    await expectLeftActive(prefix, job.id);
  });
});

// A job that itself takes the database down (a statement a backend is killed for, out of memory)
// met an outage on every run: an outage costs no attempt, so the job ran again, and took the
// database down again, for ever. Made here with a real server the job's store stops.
describe('tray worker when a job takes its database down on every run', () => {
  const prefix = useQueuePrefix();
  const postgres = useStoppablePostgres();
  let queue: BullQueue<WebhookJobData> | undefined;
  let worker: RunningWorker | undefined;
  const poison = jobDataOf(commentEvent({ commentId: 'cm-poison' }));
  let runs = 0;
  let restarts = Promise.resolve();

  before(async function () {
    this.timeout(60_000);
    const storage = await postgres.openStorage();
    queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    const events = withMethod(storage.events, 'store', (store) => async (...args) => {
      if (args[0].key !== poison.dedupeKey) return store(...args);
      runs += 1;
      await postgres.stop();
      // Up again soon after, as a server restarts after a crash.
      restarts = restarts.then(() => sleep(300)).then(() => postgres.start());
      return store(...args);
    });
    worker = await quietWorker(
      queue,
      { ...storage, events },
      { storageProbe: { firstProbeMs: 100, maxProbeMs: 200 } },
    );
  });
  after(async function () {
    this.timeout(30_000);
    await worker?.close();
    await restarts;
  });

  it('spends an attempt after a few runs of one attempt that met an outage, so it cannot loop for ever', async function () {
    this.timeout(90_000);
    const job = await queue!.add(poison, {
      ...webhookJobOptions,
      attempts: 2,
      backoff: { type: 'fixed', delay: 10 },
    });
    const outcome = await Promise.race([
      settled(job),
      sleep(60_000).then(() => `still running after ${runs} runs`),
    ]);
    expect(outcome).to.equal('failed');
    // Each attempt: the first run and WORKER_OUTAGE_RETRIES more after an outage each.
    expect(runs).to.equal(2 * (1 + WORKER_OUTAGE_RETRIES));
    await restarts;
    // And the worker goes on with other jobs.
    const next = await queue!.add(
      jobDataOf(commentEvent({ commentId: 'cm-after-poison' })),
      webhookJobOptions,
    );
    expect(await settled(next)).to.equal('completed');
  });
});

// A community's posts that reach the worker together are fanned out together (start-worker.ts):
// one post whose fan-out cannot succeed must fail its own job only, not the others gathered with it
// on every retry of theirs.
describe('tray worker when one post of a community cannot be fanned out', () => {
  const prefix = useQueuePrefix();
  const suite = useTrayStorage();
  let queue: BullQueue<WebhookJobData> | undefined;
  let worker: RunningWorker | undefined;
  /** The posts of each fan-out call, by their action ids. */
  const fanOuts: string[][] = [];
  /** Holds the fan-out of the post p-block until released: posts arriving meanwhile wait together. */
  const blocker = Promise.withResolvers<undefined>();

  before(async () => {
    queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    const { storage } = suite;
    const writes = withMethod(storage.writes, 'fanOutPosts', (fanOutPosts) => async (...args) => {
      fanOuts.push(args[1].map((post) => post.lastActionId));
      if (args[1].some((post) => post.lastActionId === 'p-block')) await blocker.promise;
      if (args[1].some((post) => post.lastActionId === 'p-poison'))
        throw new Error('this post cannot be fanned out');
      return fanOutPosts(...args);
    });
    worker = await quietWorker(queue, { ...storage, writes, ping: () => storage.ping() });
  });
  after(async function () {
    this.timeout(30_000);
    await worker?.close();
  });

  it('fails the poison post’s job only; the post fanned out with it completes', async function () {
    this.timeout(60_000);
    const options = { ...webhookJobOptions, attempts: 1 };
    const join = await queue!.add(
      jobDataOf(membershipEvent('join', ['u-ben'], 'c-fan', minute(-5))),
      options,
    );
    expect(await settled(join)).to.equal('completed');
    // A community's fan-outs run one at a time, and posts that arrive while one runs go together in
    // the next: held behind p-block's, the two posts are fanned out together, however busy the
    // machine (a gathering window alone is 25 ms).
    const block = await queue!.add(
      jobDataOf(postEvent({ postId: 'p-block', communityId: 'c-fan' })),
      options,
    );
    await waitFor(() => fanOuts.some((ids) => ids.includes('p-block')), 10_000, 'p-block’s fan-out');
    const [good, poison] = await Promise.all(
      ['p-good', 'p-poison'].map((postId) =>
        queue!.add(jobDataOf(postEvent({ postId, communityId: 'c-fan' })), options),
      ),
    );
    try {
      await waitFor(
        async () =>
          (await Promise.all([good!.getState(), poison!.getState()])).every((state) => state === 'active'),
        10_000,
        'both posts taken',
      );
      // Taken, then each stores its event before it reaches the fan-out: time for both.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    } finally {
      blocker.resolve(undefined);
    }
    expect(await settled(block)).to.equal('completed');
    expect(await Promise.all([settled(good!), settled(poison!)])).to.deep.equal(['completed', 'failed']);
    // They were fanned out together first, and the good one again on its own.
    expect(fanOuts.map((ids) => [...ids].sort())).to.deep.include(['p-good', 'p-poison']);
    expect(fanOuts).to.deep.include(['p-good']);
    const records = await readAll(suite.storage, 'u-ben');
    // One post record of c-fan; the poison post, newest by its id, is not in it.
    expect(records.map((record) => [record.verb, record.lastActionId])).to.deep.equal([['post', 'p-good']]);
  });
});

// A job stalls when its worker stops holding it mid-job: killed, or shut down while waiting for the
// storage. A stall costs no attempt, but bull fails a job outright once it has stalled more than
// maxStalledCount times, without its retries.
describe('tray worker when a job stalls (its worker killed mid-job)', () => {
  const prefix = useQueuePrefix();
  const suite = useTrayStorage();
  const recording = recordingLogger();
  const registry = createMetricsRegistry('test', false);
  let queue: BullQueue<WebhookJobData> | undefined;
  let vanishing: BullQueue<WebhookJobData> | undefined;
  let worker: RunningWorker | undefined;
  const redis = () => new Redis(testStack().redisUrl);
  let admin: Redis | undefined;

  before(async () => {
    queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    // Another worker's queue, whose jobs are taken and then abandoned (its process "killed").
    vanishing = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    admin = redis();
    worker = await startWorker({
      queue,
      networkId: 'default',
      storage: suite.storage,
      logger: recording.logger,
      registry,
      purgeIntervalMs: 0,
    });
    // This worker takes no job until a test lets it: the other one takes them, and dies.
    await queue.pause(true, true);
  });
  after(async function () {
    this.timeout(30_000);
    await worker?.close();
    await vanishing?.close();
    admin?.disconnect();
  });

  /** The other worker takes the waiting job and dies holding it; this worker's stalled check finds it. */
  async function stall(jobId: string): Promise<void> {
    await stallJob({ vanishing: vanishing!, checker: queue!, admin: admin!, prefix, jobId });
  }

  it('runs a job again after it stalled twice, without spending an attempt', async function () {
    this.timeout(30_000);
    const job = await queue!.add(jobDataOf(commentEvent({ commentId: 'cm-stalled' })), {
      ...webhookJobOptions,
      jobId: 'stalled-twice',
    });
    await stall('stalled-twice');
    await stall('stalled-twice');
    expect(await job.getState()).to.equal('waiting');
    await queue!.resume(true);
    try {
      expect(await settled(job)).to.equal('completed');
      expect((await queue!.getJob(job.id))?.attemptsMade).to.equal(0);
    } finally {
      await queue!.pause(true, true);
    }
  });

  it('logs and counts a job that stalled more often than bull allows, left in the failed set to replay', async function () {
    this.timeout(30_000);
    const job = await queue!.add(jobDataOf(commentEvent({ commentId: 'cm-crashes' })), {
      ...webhookJobOptions,
      jobId: 'stalled-out',
    });
    let stalls = 0;
    while ((await job.getState()) === 'waiting' && stalls < 20) {
      await stall('stalled-out');
      stalls += 1;
    }
    const failed = await queue!.getJob('stalled-out');
    expect(await failed?.getState()).to.equal('failed');
    expect(failed?.failedReason).to.equal('job stalled more than allowable limit');
    await waitFor(
      () => recording.messages.some((message) => message.includes('stalled')),
      5_000,
      'the stalled job to be logged',
    );
    expect(recording.messages).to.include(
      'job failed: it stalled more often than bull allows (its worker stopped mid-job each time); in the failed set, replayable',
    );
    expect(stalls, 'stalls survived, and the one too many').to.equal(WEBHOOK_MAX_STALLED_COUNT + 1);
    expect(failed?.attemptsMade).to.equal(0);
    const jobs = await registry.getSingleMetricAsString('tray_worker_jobs_total');
    expect(jobs).to.match(/tray_worker_jobs_total\{outcome="stalled_out"[^}]*\} 1/);

    // Replayed (scripts/replay's `failed`), it runs.
    await failed?.retry();
    await queue!.resume(true);
    try {
      expect(await settled(job)).to.equal('completed');
    } finally {
      await queue!.pause(true, true);
    }
  });
});
