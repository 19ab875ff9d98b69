import type { Response } from 'express';
import type { Registry } from 'prom-client';
import type { Logger } from '../../shared/logging/create-logger.ts';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import type { TrayRecordDoc } from '../../shared/tray/tray-record.ts';
import type { BanView } from '../api/auth/ban-cache.ts';
import { toNotificationRecord } from '../api/tray/to-notification-record.ts';
import type { MessageRenderer } from '../messages/message-renderer.ts';
import type { ClearsRepository } from '../store/clears-repository.ts';
import type { ReadStateRepository } from '../store/read-state-repository.ts';
import type { RecordQueries } from '../store/record-queries.ts';
import { changeChannel, shardOf } from './change-channels.ts';
import { fromWire, parseChanges, type LiveChange } from './live-change.ts';
import { sseComment, sseEvent, sseRetry } from './sse-format.ts';
import {
  CLEARED_ID,
  encodeCursor,
  hasSeen,
  inWindow,
  markSeen,
  SETTLE_MS,
  type StreamCursor,
} from './stream-cursor.ts';
import { createStreamMetrics, type StreamMetrics } from './stream-metrics.ts';
import type { StreamSlots } from './stream-slots.ts';

export interface StreamHubDeps {
  /** A connection of its own: in subscriber mode it can run nothing else. The hub closes it. */
  subscriber: RedisClient;
  /** STREAM_REDIS_PREFIX: the channels the worker and the API publish on. */
  prefix: string;
  records: RecordQueries;
  readState: ReadStateRepository;
  clears: ClearsRepository;
  messages: MessageRenderer;
  bans: BanView;
  slots: StreamSlots;
  logger: Logger;
  registry: Registry;
  now: () => number;
  /** Comment line interval (default 15 s); also renews the streams' slot leases. */
  heartbeatMs?: number;
  /** How often open streams are checked against the ban list (default 1 s). */
  banSweepMs?: number;
}

/** One stream to open: who, in which locale, and where a reconnect resumes. */
export interface OpenStream {
  userId: string;
  streamId: string;
  locale: string;
  cursor: StreamCursor;
  /**
   * fresh: a new stream (the client loads its history itself); resume: a reconnect with an id
   * this service sent; reset: that id is too old to resume from, the client is told to reload.
   */
  start: 'fresh' | 'resume' | 'reset';
}

export interface StreamHub {
  open(res: Response, stream: OpenStream): void;
  /** Streams open on this instance. */
  readonly size: number;
  /**
   * Shutdown: every stream gets a `retry:` hint between `retryMs` and five times that (spread, so
   * the clients do not all come back in the same instant) and is closed; so is the subscriber.
   */
  close(retryMs: number): Promise<void>;
}

interface Session extends OpenStream {
  res: Response;
  unread: number | undefined;
  closed: boolean;
}

/** A stream whose client reads slower than this many buffered bytes is closed (it reconnects). */
const MAX_BUFFERED = 1 << 20;
/** Users caught up at once after the subscription comes back. */
const RESYNC_PARALLEL = 8;

/**
 * This instance's open streams. Changes arrive on the users' shard channels (Redis pub/sub) and
 * are written to every stream of their user; per user, work runs one task after another, so a
 * stream sees changes in the order this instance received them. Each stream remembers what it
 * delivered (its cursor), which makes a change arriving twice (a catch-up overlapping live
 * delivery) harmless. docs/live-tray.md describes the protocol.
 */
export function createStreamHub(deps: StreamHubDeps): StreamHub {
  const { subscriber, logger, now } = deps;
  const byUser = new Map<string, Set<Session>>();
  const usersPerShard = new Map<number, number>();
  const subscribed = new Map<number, Promise<void>>();
  const chains = new Map<string, Promise<void>>();
  const countQueued = new Set<string>();
  let size = 0;
  let closing = false;
  const metrics: StreamMetrics = createStreamMetrics(deps.registry, () => size);

  /** Runs `task` after the user's earlier tasks; a failure is logged, never thrown. */
  function run(userId: string, task: () => Promise<void>): Promise<void> {
    const next = (chains.get(userId) ?? Promise.resolve()).then(task).catch((error: unknown) => {
      logger.warn({ err: (error as Error).message }, 'live stream update failed');
    });
    chains.set(userId, next);
    void next.then(() => {
      if (chains.get(userId) === next) chains.delete(userId);
    });
    return next;
  }

  function write(session: Session, event: string, data: unknown): void {
    if (session.closed) return;
    session.res.write(sseEvent(event, encodeCursor(session.cursor), data));
    metrics.events.inc({ event });
    if (session.res.writableLength > MAX_BUFFERED) end(session);
  }

  function sendRecord(session: Session, record: TrayRecordDoc): void {
    if (hasSeen(session.cursor, record._id, record.version)) return;
    markSeen(session.cursor, record._id, record.version, record.changedAt ?? 0);
    write(session, 'record', toNotificationRecord(record, deps.messages.render(record, session.locale)));
  }

  function sendCleared(session: Session, at: number): void {
    if (hasSeen(session.cursor, CLEARED_ID, at)) return;
    markSeen(session.cursor, CLEARED_ID, at, at);
    write(session, 'cleared', {});
  }

  function deliver(session: Session, change: LiveChange): void {
    switch (change.kind) {
      case 'record':
        for (const record of change.records) sendRecord(session, fromWire(record));
        return;
      case 'read': {
        const ids: string[] = [];
        for (const record of change.records) {
          if (hasSeen(session.cursor, record._id, record.version)) continue;
          markSeen(session.cursor, record._id, record.version, record.changedAt ?? 0);
          ids.push(record._id);
        }
        if (ids.length > 0) write(session, 'read', { ids });
        return;
      }
      case 'cleared':
        sendCleared(session, change.at);
        return;
      case 'last-read':
        return;
    }
  }

  /** The user's unread count, written to each stream whose last count differs. */
  async function sendUnread(userId: string): Promise<void> {
    const sessions = byUser.get(userId);
    if (!sessions) return;
    const lastReadAt = await deps.readState.lastReadAt(userId);
    const count = await deps.records.countUnread(userId, lastReadAt, now());
    for (const session of sessions) {
      if (session.unread === count) continue;
      session.unread = count;
      write(session, 'unread', { totalUnreadCount: count });
    }
  }

  /** One count after a burst of changes, not one per change. */
  function queueCount(userId: string): void {
    if (countQueued.has(userId)) return;
    countQueued.add(userId);
    void run(userId, async () => {
      countQueued.delete(userId);
      await sendUnread(userId);
    });
  }

  /** Sends `sessions` what they missed since their cursors, from the database. */
  async function catchUp(userId: string, sessions: readonly Session[]): Promise<void> {
    if (sessions.length === 0) return;
    const since = Math.min(...sessions.map((session) => session.cursor.at)) - SETTLE_MS;
    const [changed, clearedAt] = await Promise.all([
      deps.records.changedSince(userId, since, now()),
      deps.clears.lastClearedAt(userId),
    ]);
    for (const session of sessions) {
      if (clearedAt > 0 && inWindow(session.cursor, clearedAt)) sendCleared(session, clearedAt);
      for (const record of changed) {
        if (inWindow(session.cursor, record.changedAt ?? 0)) sendRecord(session, record);
      }
    }
  }

  subscriber.on('message', (_channel: string, message: string) => {
    for (const change of parseChanges(message)) {
      if (!byUser.has(change.userId)) continue;
      void run(change.userId, async () => {
        for (const session of byUser.get(change.userId) ?? []) deliver(session, change);
      });
      queueCount(change.userId);
    }
  });

  function subscribe(shard: number): Promise<void> {
    const done = subscriber.subscribe(changeChannel(deps.prefix, shard)).then(
      () => undefined,
      (error: unknown) => {
        // Redis is down: the streams stay open and catch up when the subscriber is ready again.
        logger.warn({ err: (error as Error).message, shard }, 'live change subscription failed');
      },
    );
    subscribed.set(shard, done);
    return done;
  }

  function addUser(userId: string): Promise<void> {
    const shard = shardOf(userId);
    const users = usersPerShard.get(shard) ?? 0;
    usersPerShard.set(shard, users + 1);
    return users === 0 ? subscribe(shard) : (subscribed.get(shard) ?? Promise.resolve());
  }

  function removeUser(userId: string): void {
    const shard = shardOf(userId);
    const users = (usersPerShard.get(shard) ?? 1) - 1;
    if (users > 0) {
      usersPerShard.set(shard, users);
      return;
    }
    usersPerShard.delete(shard);
    subscribed.delete(shard);
    if (!closing) {
      subscriber.unsubscribe(changeChannel(deps.prefix, shard)).catch(() => undefined);
    }
  }

  function remove(session: Session): void {
    if (session.closed) return;
    session.closed = true;
    const sessions = byUser.get(session.userId);
    sessions?.delete(session);
    if (sessions?.size === 0) {
      byUser.delete(session.userId);
      removeUser(session.userId);
    }
    size -= 1;
    deps.slots.release(session.userId, session.streamId).catch((error: unknown) => {
      logger.warn({ err: (error as Error).message }, 'stream slot not released; its lease lapses');
    });
  }

  function end(session: Session): void {
    if (session.closed) return;
    remove(session);
    session.res.end();
  }

  // Redis came back: subscriptions are renewed and every stream catches up on what it missed.
  let connectedBefore = subscriber.status === 'ready';
  subscriber.on('ready', () => {
    if (!connectedBefore) {
      connectedBefore = true;
      return;
    }
    void resync();
  });
  async function resync(): Promise<void> {
    for (const shard of usersPerShard.keys()) void subscribe(shard);
    await Promise.all([...subscribed.values()]);
    const users = [...byUser.keys()];
    for (let start = 0; start < users.length; start += RESYNC_PARALLEL) {
      await Promise.all(
        users.slice(start, start + RESYNC_PARALLEL).map((userId) => {
          const done = run(userId, () => catchUp(userId, [...(byUser.get(userId) ?? [])]));
          queueCount(userId);
          return done;
        }),
      );
    }
  }

  const heartbeat = setInterval(() => {
    for (const sessions of byUser.values()) {
      for (const session of sessions) {
        session.res.write(sseComment('heartbeat'));
        deps.slots.renew(session.userId, session.streamId).catch(() => undefined);
      }
    }
  }, deps.heartbeatMs ?? 15_000);
  heartbeat.unref();
  // A banned user's streams end within a sweep of the ban reaching this instance's ban cache.
  const banSweep = setInterval(() => {
    for (const [userId, sessions] of byUser) {
      if (deps.bans.isBanned(userId)) for (const session of [...sessions]) end(session);
    }
  }, deps.banSweepMs ?? 1_000);
  banSweep.unref();

  return {
    get size() {
      return size;
    },
    open(res, stream) {
      const session: Session = { ...stream, res, unread: undefined, closed: false };
      res.status(200).set({
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-cache, no-transform',
        Connection: 'keep-alive',
        // nginx and similar proxies would otherwise buffer the stream.
        'X-Accel-Buffering': 'no',
        'Content-Language': stream.locale,
      });
      res.flushHeaders();
      const sessions = byUser.get(stream.userId) ?? new Set<Session>();
      const ready = sessions.size === 0 ? addUser(stream.userId) : subscribed.get(shardOf(stream.userId));
      sessions.add(session);
      byUser.set(stream.userId, sessions);
      size += 1;
      res.on('close', () => remove(session));
      void run(stream.userId, async () => {
        // Subscribed before anything is read, so no change falls between the read and the feed.
        await ready;
        await sendUnread(stream.userId);
        if (stream.start === 'reset') write(session, 'reset', {});
        if (stream.start === 'resume') await catchUp(stream.userId, [session]);
      });
    },
    async close(retryMs) {
      closing = true;
      clearInterval(heartbeat);
      clearInterval(banSweep);
      for (const sessions of [...byUser.values()]) {
        for (const session of [...sessions]) {
          if (!session.closed) session.res.write(sseRetry(retryMs * (1 + Math.random() * 4)));
          end(session);
        }
      }
      subscriber.disconnect();
    },
  };
}
