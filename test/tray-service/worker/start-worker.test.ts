import { expect } from 'chai';
import { createMetricsRegistry } from '../../../shared/http/metrics-router.ts';
import { createWebhookQueue, type WebhookJobData } from '../../../shared/queue/webhook-queue.ts';
import type { TrayStorage } from '../../../tray-service/storage/port.ts';
import { openPostgresStorage } from '../../../tray-service/storage/postgres/open-postgres-storage.ts';
import { startWorker, type RunningWorker } from '../../../tray-service/worker/start-worker.ts';
import { recordingLogger } from '../../support/recording-logger.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import { usePostgres } from '../../support/use-postgres.ts';
import { useRefusableRedis } from '../../support/use-refusable-redis.ts';
import { waitFor } from '../../support/wait-for.ts';
import { commentEvent } from './event-builder.ts';
import { jobDataOf } from './worker-harness.ts';
import type { BullQueue } from '../../../shared/queue/create-bull-queue.ts';

describe("tray worker's periodic purge", () => {
  const pg = usePostgres();
  const prefix = useQueuePrefix();
  const opened: TrayStorage[] = [];
  let queue: BullQueue<WebhookJobData> | undefined;
  let worker: RunningWorker | undefined;
  afterEach(async () => {
    await worker?.close();
    worker = undefined;
    await queue?.close();
    for (const storage of opened.splice(0)) await storage.close();
  });

  /** A storage on the suite's database whose statements are cancelled after `statementTimeoutMs`. */
  const open = async (statementTimeoutMs: number) => {
    const storage = await openPostgresStorage(pg.url, {
      poolSize: 3,
      statementTimeoutMs,
      applicationName: 'tests',
    });
    opened.push(storage);
    return storage;
  };
  const start = (
    storage: TrayStorage,
    purgeIntervalMs: number,
    logger: ReturnType<typeof recordingLogger>['logger'],
  ) => {
    // A queue per worker: bull takes one handler per queue.
    queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    return startWorker({
      queue,
      networkId: 'default',
      storage,
      logger,
      registry: createMetricsRegistry('test', false),
      purgeIntervalMs,
    });
  };
  /** Holds tray_records as a long-running statement or a migration would, until released. */
  const holdRecords = async () => {
    const holder = await pg.pool.connect();
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE tray_records IN ACCESS EXCLUSIVE MODE');
    return async () => {
      await holder.query('ROLLBACK');
      holder.release();
    };
  };

  it('never starts a purge while the previous one runs: the interval is skipped, and said', async () => {
    const storage = await open(30_000);
    let started = 0;
    const counted: TrayStorage = {
      ...storage,
      purgeExpired: (now) => {
        started += 1;
        return storage.purgeExpired(now);
      },
    };
    const { logger, messages } = recordingLogger();
    const release = await holdRecords();
    try {
      // The first purge (at start-up) waits for tray_records; intervals of 20 ms pass meanwhile.
      worker = await start(counted, 20, logger);
      const skipped = () => messages.filter((message) => message.startsWith('purge still running')).length;
      await waitFor(
        () => started > 1 || skipped() >= 3,
        10_000,
        'three intervals while the first purge runs',
      );
      expect(started, 'purges started').to.equal(1);
    } finally {
      await release();
    }
    await waitFor(() => started > 1, 10_000, 'the next purge, once the first ended');
  });

  it('logs each table the purge could not purge once, by name', async () => {
    const storage = await open(300);
    const { logger, messages } = recordingLogger();
    const release = await holdRecords();
    try {
      // One purge only: the one at start-up.
      worker = await start(storage, 3_600_000, logger);
      await waitFor(() => messages.some((message) => message.includes('purge')), 10_000, 'the purge to end');
    } finally {
      await release();
    }
    // The mute spans' purge reads their owners' records, so the lock on them stops it too.
    expect(messages.filter((message) => message.includes('purge'))).to.deep.equal(
      ['tray_records', 'tray_mutes'].map(
        (table) =>
          `purge of ${table} failed (canceling statement due to statement timeout); retried at the next interval`,
      ),
    );
  });

  // The shutdown awaits settled() before it logs "stopped": a purge's last word after that line
  // read as a process still at work after it said it had stopped.
  it('a purge the shutdown cuts short says so once, before settled() resolves, and fails nothing', async () => {
    const storage = await open(30_000);
    const { logger, messages } = recordingLogger();
    const release = await holdRecords();
    let closing: Promise<void> | undefined;
    try {
      worker = await start(storage, 3_600_000, logger);
      await waitFor(
        async () =>
          (
            await pg.pool.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%tray_records%'",
            )
          ).rows[0]?.n === 1,
        10_000,
        'the purge at start-up waiting for tray_records',
      );
      await worker.close();
      let settled = false;
      void worker.settled().then(() => (settled = true));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(settled, 'settled() while the purge waits').to.equal(false);
      closing = storage.close();
    } finally {
      await release();
    }
    await closing;
    await worker.settled();
    const running = worker;
    worker = undefined;
    await running.close();
    expect(messages.filter((message) => message.includes('purge'))).to.deep.equal([
      'purge cut short by the shutdown; it runs again at the next start',
    ]);
  });
});

/** A suite's storage, queue and worker, each closed after the suite. */
function useWorkerResources() {
  const held: { storage?: TrayStorage; queue?: BullQueue<WebhookJobData>; worker?: RunningWorker } = {};
  after(async () => {
    await held.worker?.close();
    await held.queue?.close();
    await held.storage?.close();
  });
  return held;
}

/** The storage a worker of these suites writes through. */
const openStorage = (url: string) =>
  openPostgresStorage(url, { poolSize: 3, statementTimeoutMs: 30_000, applicationName: 'tests' });

describe("tray worker's events metric and invalid-payload warning", () => {
  const pg = usePostgres();
  const prefix = useQueuePrefix();
  const held = useWorkerResources();

  // A redelivered or replayed event's job completes again: the event was stored once.
  it('counts each event once, by the job that first finished it, and warns of an invalid payload once', async () => {
    const storage = (held.storage = await openStorage(pg.url));
    const queue = (held.queue = createWebhookQueue({ redis: testStack().redisUrl, prefix }));
    const registry = createMetricsRegistry('test', false);
    const { logger, messages } = recordingLogger();
    held.worker = await startWorker({
      queue,
      networkId: 'default',
      storage,
      logger,
      registry,
      purgeIntervalMs: 0,
    });
    const valid = commentEvent({ commentId: 'cm-counted' });
    const invalid = commentEvent({ commentId: 'cm-invalid' });
    delete (invalid.data.comment as Record<string, unknown>).userId;
    for (const [index, envelope] of [valid, invalid, valid, invalid].entries()) {
      const job = await queue.add(jobDataOf(envelope), { jobId: `delivery-${index}` });
      await job.finished();
    }
    const values = async (name: string) =>
      (await registry.getSingleMetric(name)!.get()).values.map((value) => [value.labels, value.value]);
    expect(await values('tray_worker_events_total')).to.deep.equal([
      [{ status: 'applied' }, 1],
      [{ status: 'invalid' }, 1],
    ]);
    expect(await values('tray_worker_jobs_total')).to.deep.equal([[{ outcome: 'completed' }, 4]]);
    expect(messages.filter((message) => message === 'invalid event payload stored')).to.have.length(1);
  });
});

describe('tray worker whose queue bull could not start taking', () => {
  const pg = usePostgres();
  const redis = useRefusableRedis();
  const prefix = useQueuePrefix();
  const held = useWorkerResources();

  // Its jobs would wait for ever behind a process that looks alive: it asks the process to stop.
  it('says so once, naming the queue, and asks the process to stop', async () => {
    const storage = (held.storage = await openStorage(pg.url));
    const url = await redis.userUrl('worker-no-subscribe', 'worker-no-subscribe-password');
    await redis.admin.call('ACL', 'SETUSER', 'worker-no-subscribe', '-subscribe', '-psubscribe');
    const queue = (held.queue = createWebhookQueue({ redis: url, prefix }));
    const { logger, lines } = recordingLogger();
    const stops: string[] = [];
    held.worker = await startWorker({
      queue,
      networkId: 'default',
      storage,
      logger,
      registry: createMetricsRegistry('test', false),
      purgeIntervalMs: 0,
      onStopped: (reason) => stops.push(reason),
    });
    await waitFor(() => stops.length > 0, 10_000, 'the stop asked for');
    expect(stops).to.have.length(1);
    expect(stops[0]).to.match(/^the webhook queue's consumer could not start taking jobs: NOPERM/);
    expect(lines.filter((line) => line.level === 60).map((line) => line.msg)).to.deep.equal(stops);
  });
});
