import type Bull from 'bull';
import type { Registry } from 'prom-client';
import { createMetricsRegistry } from '../../../shared/http/metrics-router.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import {
  createWebhookQueue,
  webhookJobOptions,
  type WebhookJobData,
} from '../../../shared/queue/webhook-queue.ts';
import { decodeRecordKey } from '../../../tray-service/domain/record-key.ts';
import type { StoredEvent } from '../../../tray-service/domain/stored-event.ts';
import type { TrayRecord } from '../../../tray-service/domain/tray-record.ts';
import type { TrayStorage } from '../../../tray-service/storage/port.ts';
import {
  startWorker,
  type RunningWorker,
  type WorkerDeps,
} from '../../../tray-service/worker/start-worker.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { testStack } from '../../support/test-stack.ts';
import { dedupeKeyOf, type TestEnvelope } from './event-builder.ts';
import type { BullQueue } from '../../../shared/queue/create-bull-queue.ts';

export interface DeliverOptions {
  /** ISO receive time (join/leave/profile events are ordered by it). Default: now. */
  receivedAt?: string;
  /** Bull job id; a different id with the same dedupe key is a redelivery. */
  jobId?: string;
  jobOptions?: Bull.JobOptions;
  /** The webhook that sent it (default `test-hook`) and the scheme that verified it (default none, as an older receiver queued it). */
  webhook?: string;
  scheme?: WebhookJobData['scheme'];
}

export interface WorkerHarness {
  /** The suite's own storage, the worker's. */
  readonly storage: TrayStorage;
  /** A further storage on the same database (another worker process's); closed with the suite. */
  another(): Promise<TrayStorage>;
  readonly queue: BullQueue<WebhookJobData>;
  readonly registry: Registry;
  /** The suite's bull prefix (another worker instance on it consumes the same queue). */
  readonly prefix: string;
  /** Queues one event like the receiver does and waits until the worker completed it. */
  deliver(envelope: TestEnvelope, options?: DeliverOptions): Promise<Bull.Job<WebhookJobData>>;
  /** Queues all at once (processed concurrently) and waits for every one. */
  deliverAll(envelopes: TestEnvelope[]): Promise<void>;
  /** The unexpired record of this key as readers see it, or null. */
  record(key: string): Promise<TrayRecord | null>;
  /** The user's unexpired records, by key. */
  records(userId: string): Promise<TrayRecord[]>;
  event(key: string): Promise<StoredEvent | null>;
}

export function jobDataOf(
  envelope: TestEnvelope,
  receivedAt = new Date().toISOString(),
  sender: Pick<DeliverOptions, 'webhook' | 'scheme'> = {},
): WebhookJobData {
  return {
    dedupeKey: dedupeKeyOf(envelope),
    webhook: sender.webhook ?? 'test-hook',
    ...(sender.scheme === undefined ? {} : { scheme: sender.scheme }),
    receivedAt,
    event: envelope.event,
    data: envelope.data,
  };
}

/**
 * A worker on the suite's own storage and queue prefix (the real bull consumer, real Redis and the
 * default storage adapter), started before the suite's tests and closed after them.
 */
export function useWorker(
  overrides: Partial<Omit<WorkerDeps, 'queue' | 'storage' | 'registry'>> = {},
): WorkerHarness {
  const suite = useTrayStorage();
  const prefix = useQueuePrefix();
  const registry = createMetricsRegistry('test', false);
  let queue: BullQueue<WebhookJobData> | undefined;
  let worker: RunningWorker | undefined;
  let sequence = 0;

  before(async () => {
    queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    // Every waiting test adds a completion listener.
    queue.setMaxListeners(1_000);
    worker = await startWorker({
      queue,
      networkId: 'default',
      storage: suite.storage,
      logger: createLogger({ name: 'test', level: 'silent' }),
      registry,
      purgeIntervalMs: 0,
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
    const data = jobDataOf(envelope, options.receivedAt, options);
    return theQueue().add(data, {
      ...webhookJobOptions,
      jobId: options.jobId ?? `${data.dedupeKey}:${++sequence}`,
      ...options.jobOptions,
    });
  };

  return {
    get storage() {
      return suite.storage;
    },
    another: () => suite.another(),
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
    record: async (key) => {
      const identity = decodeRecordKey(key);
      if (!identity) return null;
      return (await readAll(suite.storage, identity.userId)).find((record) => record.key === key) ?? null;
    },
    records: (userId) => readAll(suite.storage, userId),
    event: async (key) => (await suite.storage.events.get(key)) ?? null,
  };
}

/** Every unexpired record of the user through the v3 pages, by key. */
export async function readAll(storage: TrayStorage, userId: string, now = Date.now()): Promise<TrayRecord[]> {
  const all: TrayRecord[] = [];
  let startAfter: number | undefined;
  for (;;) {
    const page = await storage.records.pageAfter(userId, startAfter, 500, now);
    all.push(...page.records);
    if (page.nextPage === 0) break;
    startAfter = page.nextPage;
  }
  return all.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * A worker on `queue` over `storage`, logging nothing and never purging (tests purge themselves),
 * with any other setting of `more`.
 */
export const quietWorker = (
  queue: BullQueue<WebhookJobData>,
  storage: WorkerDeps['storage'],
  more: Partial<WorkerDeps> = {},
): Promise<RunningWorker> =>
  startWorker({
    queue,
    networkId: 'default',
    storage,
    logger: createLogger({ name: 'test', level: 'silent' }),
    registry: createMetricsRegistry('test', false),
    purgeIntervalMs: 0,
    ...more,
  });

/**
 * `part` of a storage with its method `name` replaced by what `replace` makes of the real one
 * (bound to `part`); every other member is the part's own.
 */
export function withMethod<T extends object, K extends keyof T>(
  part: T,
  name: K,
  replace: (real: T[K]) => T[K],
): T {
  const real = (part[name] as (...args: never[]) => unknown).bind(part) as T[K];
  const replaced = replace(real);
  return new Proxy(part, {
    get: (target, prop, receiver) => (prop === name ? replaced : Reflect.get(target, prop, receiver)),
  });
}
