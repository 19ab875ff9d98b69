import type { Registry } from 'prom-client';
import { DEFAULT_STREAMS_PER_INSTANCE } from '../../shared/config/tray-stream-config.ts';
import type { Logger } from '../../shared/logging/create-logger.ts';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import type { BanView } from '../http/auth/ban-cache.ts';
import type { MessageRenderer } from '../messages/message-renderer.ts';
import type { TrayStorage } from '../storage/port.ts';
import { createChangeAnnouncer, createChangePublisher, type ChangePublisher } from './change-publisher.ts';
import { createLostChanges } from './lost-changes.ts';
import { createRemovalLog } from './removal-log.ts';
import { createStreamHub, type StreamHub } from './stream-hub.ts';
import { createStreamSlots, type StreamSlots } from './stream-slots.ts';
import { createStreamTickets, type StreamTickets } from './stream-tickets.ts';

export interface LiveTrayDeps {
  /** The counts and catch-ups of the streams. */
  storage: Pick<TrayStorage, 'records' | 'lastRead' | 'clears' | 'inbox'>;
  /** Commands: publishing, tickets, stream slots. */
  redis: RedisClient;
  /** A dedicated connection for the subscriptions (closed with the hub). */
  subscriber: RedisClient;
  /** STREAM_REDIS_PREFIX. */
  prefix: string;
  /** STREAMS_PER_USER. */
  streamsPerUser: number;
  /** STREAMS_PER_INSTANCE (DEFAULT_STREAMS_PER_INSTANCE when left out). */
  streamsPerInstance?: number;
  messages: MessageRenderer;
  bans: BanView;
  logger: Logger;
  registry: Registry;
  now?: () => number;
  heartbeatMs?: number;
  /** Tests shorten it; QUIET_MS otherwise (stream-cursor.ts). */
  quietMs?: number;
  banSweepMs?: number;
  /** Tests shorten it (StreamHubDeps.subscriberPingTimeoutMs). */
  subscriberPingTimeoutMs?: number;
  /** Tests shorten it (StreamHubDeps.catchUpMs). */
  catchUpMs?: number;
  /** Tests shorten it; 30 s otherwise. */
  ticketTtlSeconds?: number;
  /** Tests shorten it (StreamHubDeps.maxBufferedBytes). */
  maxBufferedBytes?: number;
  /** Tests shorten it (StreamHubDeps.maxWaitingChanges). */
  maxWaitingChanges?: number;
}

/** The live tray of one API instance: its streams, and how its own writes are announced. */
export interface LiveTray {
  hub: StreamHub;
  /** The streams this instance holds at most; one more is refused (503). */
  streamsPerInstance: number;
  slots: StreamSlots;
  tickets: StreamTickets;
  /** Announces this instance's own writes (read marks, delete-all, last-read) to every instance. */
  publisher: ChangePublisher;
}

export function createLiveTray(deps: LiveTrayDeps): LiveTray {
  const now = deps.now ?? Date.now;
  const heartbeatMs = deps.heartbeatMs ?? 15_000;
  const slots = createStreamSlots(deps.redis, {
    prefix: deps.prefix,
    limit: deps.streamsPerUser,
    // Four heartbeats: a stream whose instance died frees its slot within a minute.
    leaseMs: heartbeatMs * 4,
    now,
  });
  const hub = createStreamHub({
    subscriber: deps.subscriber,
    prefix: deps.prefix,
    storage: deps.storage,
    lost: createLostChanges(deps.redis, deps.prefix),
    removals: createRemovalLog(deps.redis, deps.prefix),
    messages: deps.messages,
    bans: deps.bans,
    slots,
    announce: createChangeAnnouncer(deps.redis, deps.prefix, deps.logger),
    logger: deps.logger,
    registry: deps.registry,
    now,
    heartbeatMs,
    ...(deps.quietMs === undefined ? {} : { quietMs: deps.quietMs }),
    ...(deps.banSweepMs === undefined ? {} : { banSweepMs: deps.banSweepMs }),
    ...(deps.subscriberPingTimeoutMs === undefined
      ? {}
      : { subscriberPingTimeoutMs: deps.subscriberPingTimeoutMs }),
    ...(deps.catchUpMs === undefined ? {} : { catchUpMs: deps.catchUpMs }),
    ...(deps.maxBufferedBytes === undefined ? {} : { maxBufferedBytes: deps.maxBufferedBytes }),
    ...(deps.maxWaitingChanges === undefined ? {} : { maxWaitingChanges: deps.maxWaitingChanges }),
  });
  return {
    hub,
    streamsPerInstance: deps.streamsPerInstance ?? DEFAULT_STREAMS_PER_INSTANCE,
    slots,
    tickets: createStreamTickets(deps.redis, deps.prefix, deps.ticketTtlSeconds),
    publisher: createChangePublisher(deps.redis, deps.prefix, deps.logger),
  };
}
