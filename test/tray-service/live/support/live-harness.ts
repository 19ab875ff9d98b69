import type { CorsOrigins } from '../../../../shared/config/cors-origins.ts';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { closeServer, listen } from '../../../../shared/http/listen.ts';
import { createMetricsRegistry } from '../../../../shared/http/metrics-router.ts';
import { createLogger } from '../../../../shared/logging/create-logger.ts';
import { createRedis, type RedisClient } from '../../../../shared/redis/create-redis.ts';
import type { InboxRecord } from '../../../../tray-service/domain/inbox-record.ts';
import type { MarkedRecord, RemovedRecord } from '../../../../tray-service/storage/port.ts';
import { startBanCache, type BanCache } from '../../../../tray-service/http/auth/ban-cache.ts';
import {
  createChangePublisher,
  type ChangePublisher,
} from '../../../../tray-service/live/change-publisher.ts';
import { createFailedAuthLimit } from '../../../../tray-service/http/rate-limit/failed-auth-limit.ts';
import { createLiveTray, type LiveTray } from '../../../../tray-service/live/create-live-tray.ts';
import { createMessageRenderer } from '../../../../tray-service/messages/create-message-renderer.ts';
import { uniqueName } from '../../../support/suite-resources.ts';
import { testStack } from '../../../support/test-stack.ts';
import { bearer, useTrayApi, type TrayApiHarness } from '../../api/support/api-harness.ts';
import { named, openSse, type SseStream } from './sse-client.ts';
import { useWorker, type WorkerHarness } from '../../worker/worker-harness.ts';

/** One API instance: its own app, server, ban cache, subscriber and metrics. */
export interface LiveInstance {
  readonly base: string;
  readonly live: LiveTray;
  readonly registry: Registry;
  readonly server: Server;
}

export interface LiveHarness {
  readonly api: TrayApiHarness;
  readonly worker: WorkerHarness;
  /** The suite's publisher (what the worker announces through): for other announcers, the wake-up. */
  readonly changes: ChangePublisher;
  /** STREAM_REDIS_PREFIX of the suite's instances: for a publisher of a test's own. */
  readonly prefix: string;
  /** The suite's instances, listening on 127.0.0.1. */
  instance(index: number): LiveInstance;
  /**
   * A stream of `userId` on the first instance, opened with a token of theirs (and `headers`) and
   * read up to its first counts; closed after the suite.
   */
  stream(userId: string, headers?: Record<string, string>): Promise<SseStream>;
}

export interface LiveHarnessOptions {
  instances?: number;
  streamsPerUser?: number;
  /** STREAMS_PER_INSTANCE of every instance; its default otherwise. */
  streamsPerInstance?: number;
  heartbeatMs?: number;
  /** Bytes buffered for a stream's client past which it is ended; 1 MiB otherwise. */
  maxBufferedBytes?: number;
  ticketTtlSeconds?: number;
  demo?: boolean;
  /** AUTH_FAILURE_LIMIT of every instance (one count shared through Redis); unset: no such limit. */
  failedAuthLimit?: number;
  /** TRAY_CORS_ORIGINS of every instance, read when the suite starts (a test may fill it before). */
  corsOrigins?: CorsOrigins;
}

const messages = createMessageRenderer({ defaultLocale: 'en' });
const silent = createLogger({ name: 'test', level: 'silent' });

/**
 * A worker on the real queue that announces its writes, and `instances` API instances over the
 * same database and Redis, each with its own stream hub: what runs when several tray processes
 * sit behind a load balancer.
 */
export function useLiveTray(options: LiveHarnessOptions = {}): LiveHarness {
  const api = useTrayApi();
  const prefix = uniqueName('live');
  let publisherRedis: RedisClient | undefined;
  let publisher: ChangePublisher | undefined;
  const theOne = () => {
    if (!publisher) throw new Error('useLiveTray: the worker published before the suite started');
    return publisher;
  };
  // The worker is created when the suite is declared; its publisher's connection once it starts.
  const changes: ChangePublisher = {
    recordsWritten: (records: readonly InboxRecord[]) => theOne().recordsWritten(records),
    recordsRemoved: (records: readonly RemovedRecord[]) => theOne().recordsRemoved(records),
    markedRead: (records: readonly MarkedRecord[]) => theOne().markedRead(records),
    inboxMarked: (mark, records) => theOne().inboxMarked(mark, records),
    cleared: (userId: string, at: number) => theOne().cleared(userId, at),
    lastRead: (userId: string) => theOne().lastRead(userId),
  };
  const worker = useWorker({ bans: { prefix: api.banPrefix }, changes });
  const instances: LiveInstance[] = [];
  const caches: BanCache[] = [];
  const failedAuthPrefix = uniqueName('auth');
  const streams: SseStream[] = [];

  before(async () => {
    publisherRedis = createRedis(testStack().redisUrl);
    publisher = createChangePublisher(publisherRedis, prefix, silent);
    for (let i = 0; i < (options.instances ?? 2); i += 1) {
      const bans = await startBanCache(api.redis, { prefix: api.banPrefix, refreshMs: 200, logger: silent });
      caches.push(bans);
      const registry = createMetricsRegistry('tray-service', false);
      const live = createLiveTray({
        storage: worker.storage,
        redis: api.redis,
        subscriber: createRedis(testStack().redisUrl),
        prefix,
        streamsPerUser: options.streamsPerUser ?? 5,
        ...(options.streamsPerInstance === undefined
          ? {}
          : { streamsPerInstance: options.streamsPerInstance }),
        messages,
        bans,
        logger: silent,
        registry,
        ...(options.heartbeatMs === undefined ? {} : { heartbeatMs: options.heartbeatMs }),
        ...(options.maxBufferedBytes === undefined ? {} : { maxBufferedBytes: options.maxBufferedBytes }),
        ...(options.ticketTtlSeconds === undefined ? {} : { ticketTtlSeconds: options.ticketTtlSeconds }),
        banSweepMs: 100,
      });
      const app = api.app({
        storage: worker.storage,
        bans,
        registry,
        live,
        demo: options.demo ?? false,
        ...(options.failedAuthLimit === undefined
          ? {}
          : {
              failedAuth: createFailedAuthLimit({
                redis: api.redis,
                points: options.failedAuthLimit,
                windowMs: 60_000,
                keyPrefix: failedAuthPrefix,
              }),
            }),
        settings: {
          pageSize: 10,
          networkId: 'net1',
          blockApi: true,
          retentionDays: 90,
          ...(options.corsOrigins === undefined ? {} : { corsOrigins: options.corsOrigins }),
        },
      });
      const server = await listen(app, { port: 0, host: '127.0.0.1' });
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      instances.push({ base, live, registry, server });
    }
  });
  after(async () => {
    for (const stream of streams.splice(0)) stream.close();
    for (const instance of instances) {
      await instance.live.hub.close(1_000);
      await closeServer(instance.server, 1_000);
    }
    for (const cache of caches) cache.stop();
    publisherRedis?.disconnect();
  });

  return {
    api,
    worker,
    changes,
    prefix,
    instance(index) {
      const found = instances[index];
      if (!found) throw new Error(`useLiveTray: no instance ${index}`);
      return found;
    },
    async stream(userId, headers = {}) {
      const base = instances[0]?.base;
      if (!base) throw new Error('useLiveTray: a stream opened before the suite started');
      const opened = await openSse(`${base}/notifications/v3/stream`, {
        Authorization: await bearer(userId),
        ...headers,
      });
      streams.push(opened);
      await opened.next(named('unread'));
      return opened;
    },
  };
}
