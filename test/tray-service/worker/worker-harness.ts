import type Bull from 'bull';
import type { Db } from 'mongodb';
import type { Registry } from 'prom-client';
import { createMetricsRegistry } from '../../../shared/http/metrics-router.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import {
  createWebhookQueue,
  webhookJobOptions,
  type WebhookJobData,
} from '../../../shared/queue/webhook-queue.ts';
import { TRAY_RECORDS, type StoredEventDoc, type TrayRecordDoc } from '../../../shared/tray/tray-record.ts';
import {
  startWorker,
  type RunningWorker,
  type WorkerDeps,
} from '../../../tray-service/worker/start-worker.ts';
import { useMongo, useQueuePrefix } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import { dedupeKeyOf, type TestEnvelope } from './event-builder.ts';

export interface DeliverOptions {
  /** ISO receive time (join/leave/profile events are ordered by it). Default: now. */
  receivedAt?: string;
  /** Bull job id; a different id with the same dedupe key is a redelivery. */
  jobId?: string;
  jobOptions?: Bull.JobOptions;
}

export interface WorkerHarness {
  readonly db: Db;
  readonly queue: Bull.Queue<WebhookJobData>;
  readonly registry: Registry;
  /** The suite's bull prefix (another worker instance on it consumes the same queue). */
  readonly prefix: string;
  /** Queues one event like the receiver does and waits until the worker completed it. */
  deliver(envelope: TestEnvelope, options?: DeliverOptions): Promise<Bull.Job<WebhookJobData>>;
  /** Queues all at once (processed concurrently) and waits for every one. */
  deliverAll(envelopes: TestEnvelope[]): Promise<void>;
  record(id: string): Promise<TrayRecordDoc | null>;
  records(userId: string): Promise<TrayRecordDoc[]>;
  event(key: string): Promise<StoredEventDoc | null>;
}

export function jobDataOf(envelope: TestEnvelope, receivedAt = new Date().toISOString()): WebhookJobData {
  return {
    dedupeKey: dedupeKeyOf(envelope),
    webhook: 'test-hook',
    receivedAt,
    event: envelope.event,
    data: envelope.data,
  };
}

/**
 * A worker on the suite's own database and queue prefix (the real bull consumer, real Redis and
 * MongoDB-compatible server), started before the suite's tests and closed after them.
 */
export function useWorker(
  overrides: Partial<Omit<WorkerDeps, 'queue' | 'db' | 'logger' | 'registry'>> = {},
): WorkerHarness {
  const mongo = useMongo();
  const prefix = useQueuePrefix();
  const registry = createMetricsRegistry('test', false);
  let queue: Bull.Queue<WebhookJobData> | undefined;
  let worker: RunningWorker | undefined;
  let sequence = 0;

  before(async () => {
    queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    // Every waiting test adds a completion listener.
    queue.setMaxListeners(1_000);
    worker = await startWorker({
      queue,
      db: mongo.db,
      logger: createLogger({ name: 'test', level: 'silent' }),
      registry,
      purgeIntervalMs: 0,
      postgresUrl: testStack().postgresUrl,
      ...overrides,
    });
  });
  after(async () => {
    await worker?.close();
  });

  const theQueue = () => {
    if (!queue) throw new Error('useWorker: queue used before the suite started');
    return queue;
  };
  const add = (envelope: TestEnvelope, options: DeliverOptions = {}) => {
    const data = jobDataOf(envelope, options.receivedAt);
    return theQueue().add(data, {
      ...webhookJobOptions,
      jobId: options.jobId ?? `${data.dedupeKey}:${++sequence}`,
      ...options.jobOptions,
    });
  };

  return {
    get db() {
      return mongo.db;
    },
    get queue() {
      return theQueue();
    },
    registry,
    prefix,
    async deliver(envelope, options) {
      const job = await add(envelope, options);
      await job.finished();
      return job;
    },
    async deliverAll(envelopes) {
      const [first, ...rest] = await Promise.all(envelopes.map((envelope) => add(envelope)));
      // bull subscribes to its global events on a queue's first finished(); until then every call
      // waits on the subscriber connection with listeners of its own (a MaxListeners warning past
      // ten), so one call goes first and the rest find the subscription made.
      await first?.finished();
      await Promise.all(rest.map((job) => job.finished()));
    },
    record: (id) => mongo.db.collection<TrayRecordDoc>(TRAY_RECORDS).findOne({ _id: id }),
    records: (userId) =>
      mongo.db.collection<TrayRecordDoc>(TRAY_RECORDS).find({ userId }).sort({ _id: 1 }).toArray(),
    event: (key) => mongo.db.collection<StoredEventDoc>('events').findOne({ _id: key }),
  };
}
