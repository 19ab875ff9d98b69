import pLimit from 'p-limit';
import type { Response } from 'express';
import type { Registry } from 'prom-client';
import type { Logger } from '../../shared/logging/create-logger.ts';
import {
  isSubscriberConnected,
  onSubscriberReplaced,
  type RedisClient,
} from '../../shared/redis/create-redis.ts';
import { watchSubscriber } from '../../shared/redis/watch-subscriber.ts';
import { withTimeout } from '../../shared/time/with-timeout.ts';
import type { BanView } from '../http/auth/ban-cache.ts';
import type { MessageRenderer } from '../messages/message-renderer.ts';
import type { InboxRecord } from '../domain/inbox-record.ts';
import type { TrayStorage } from '../storage/port.ts';
import { lastClear, streamCatchUp } from '../use-cases/stream-catch-up.ts';
import { inboxCountsOf, type CountedInbox } from '../use-cases/inbox-counts-of.ts';
import type { AnnounceChanges } from './change-publisher.ts';
import { parseChanges, type LiveChange } from './live-change.ts';
import { createRecountSchedule } from './recount-schedule.ts';
import { shardOf } from './change-channels.ts';
import { createShardSubscriptions } from './shard-subscriptions.ts';
import type { LostChanges } from './lost-changes.ts';
import type { RemovalLog } from './removal-log.ts';
import {
  CLEARED_ID,
  copyCursor,
  hasSeen,
  mayOwe,
  passed,
  passThrough,
  QUIET_MS,
  seenOnlyAsMark,
} from './stream-cursor.ts';
import { SETTLE_MS } from '../domain/settle-window.ts';
import { createStreamMetrics } from './stream-metrics.ts';
import { renewLeases } from './renew-leases.ts';
import { createStreamSession, type OpenStream, type StreamSession } from './stream-session.ts';
import type { StreamSlots } from './stream-slots.ts';

export type { OpenStream } from './stream-session.ts';

/** The longest delay setTimeout keeps (2^31 - 1 ms); a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface StreamHubDeps {
  /** A connection of its own: in subscriber mode it can run nothing else. The hub closes it. */
  subscriber: RedisClient;
  /** STREAM_REDIS_PREFIX: the channels the worker and the API publish on. */
  prefix: string;
  /** Where the counts and catch-ups are read. */
  storage: Pick<TrayStorage, 'records' | 'lastRead' | 'clears' | 'inbox'>;
  /** Changes whose publish failed: a catch-up looks back to them for a stream that missed their resync. */
  lost: Pick<LostChanges, 'of'>;
  /** Records removed lately: a catch-up tells a stream that was away of them. */
  removals: Pick<RemovalLog, 'since'>;
  messages: MessageRenderer;
  bans: BanView;
  slots: StreamSlots;
  /** Tells the instance holding a replaced stream to end it (the channels' command connection). */
  announce: AnnounceChanges;
  logger: Logger;
  registry: Registry;
  now: () => number;
  /** Comment line interval (default 15 s); also renews the streams' slot leases. */
  heartbeatMs?: number;
  /** Bytes buffered for a stream's client past which it is ended (default 1 MiB: MAX_BUFFERED). */
  maxBufferedBytes?: number;
  /** How far behind the clock a quiet stream's id is moved at its heartbeats (default QUIET_MS). */
  quietMs?: number;
  /** How often open streams are checked against the ban list (default 1 s). */
  banSweepMs?: number;
  /**
   * The subscriber is asked a PING at every heartbeat; no answer within this long (default
   * SUBSCRIBER_PING_TIMEOUT_MS) takes it for dead and connects again (watchSubscriber).
   */
  subscriberPingTimeoutMs?: number;
  /**
   * How long one catch-up may run (default CATCH_UP_MS): it holds its user's turn, and after the
   * subscription comes back a place in the pool; past it, its streams end and resume.
   */
  catchUpMs?: number;
  /** Live changes of one user waiting for its streams at most (default MAX_WAITING_CHANGES). */
  maxWaitingChanges?: number;
}

export interface StreamHub {
  /**
   * Starts the event stream on `res` (its slot is already held); after close(), or when its client
   * has gone already, ends it at once. `replaced`: the streams of the user whose places it took
   * (StreamSlots.acquire), ended with a last `replaced` event (here when this instance holds them,
   * else on the one that does) once it is open, or given their places back when it is not.
   */
  open(res: Response, stream: OpenStream, replaced?: readonly string[]): void;
  /** Streams open on this instance. */
  readonly size: number;
  /**
   * Shutdown: every stream gets a `retry:` hint between `retryMs` and five times that (spread, so
   * the clients do not all come back in the same instant) and is closed; so is the subscriber.
   */
  close(retryMs: number): Promise<void>;
}

/**
 * SubscriberPingTimeoutMs's default: far above a PING's time on a loaded Redis, since a connection
 * taken for dead wrongly costs a catch-up of every stream here.
 */
const SUBSCRIBER_PING_TIMEOUT_MS = 10_000;

/** Users caught up at once after the subscription comes back. */
const RESYNC_PARALLEL = 8;
/**
 * How long one catch-up may run. A user's changes reach their streams one task at a time (run), a
 * catch-up among them, and a client that reads a page now and then (never idle for the 10 s that
 * end a stalled stream) or a read that hangs would otherwise hold back every live change of the
 * user's other streams for as long as it lasts, and after an outage RESYNC_PARALLEL of them every
 * user's. Past it the streams end and resume from what they got (each page moved their ids): the
 * reconnect catches up the rest.
 */
const CATCH_UP_MS = 30_000;
/**
 * Live changes of one user that may wait for its streams: queued for the user's turn (behind a
 * catch-up, or, after the subscription came back, behind the catch-ups of the users before it) or
 * held for a stream until its catch-up has run. Past it the streams end and resume from their
 * ids, as a client that stops reading is dropped rather than buffered for: the catch-up on the
 * reconnect reads what they missed from storage. A user gets a few changes a second at most, so
 * this is minutes of waiting, and each change is about a kilobyte.
 */
const MAX_WAITING_CHANGES = 1_000;
/** The reconnect hint of a stream ended by a failed opening or catch-up (spread up to twice as long). */
const CATCH_UP_RETRY_MS = 2_000;
/** Users counted by one statement at most. */
const COUNT_BATCH = 500;
/**
 * The reconnect hint after `replaced`. The client package ends its stream on that event instead:
 * reconnecting by itself, it would replace the stream that replaced it, which would come back in
 * turn (two tabs at STREAMS_PER_USER 1). A client that does not know the event waits this long
 * before it takes a place again, so two of them swap every half minute rather than every second.
 */
const REPLACED_RETRY_MS = 30_000;

/**
 * This instance's open streams. Changes arrive on the users' shard channels (Redis pub/sub) and
 * are written to every stream of their user; per user, work runs one task after another, so a
 * stream sees changes in the order this instance received them. Each stream remembers what it
 * delivered (its cursor), which makes a change arriving twice (a catch-up overlapping live
 * delivery) harmless. docs/live-tray.md describes the protocol.
 */
export function createStreamHub(deps: StreamHubDeps): StreamHub {
  const { subscriber, logger, now } = deps;
  const byUser = new Map<string, Set<StreamSession>>();
  // A shard whose subscription Redis refused, tried again: its streams' live changes are held
  // before the attempt, and once it takes they catch up on what they missed, as after a reconnect.
  const shards = createShardSubscriptions(subscriber, deps.prefix, logger, (shard, resubscribe) =>
    owe((userId) => shardOf(userId) === shard, resubscribe),
  );
  const chains = new Map<string, Promise<void>>();
  /**
   * Live changes of each user queued for its turn (run) that have not started. Past the bound the
   * user's streams end and the entry is dropped: the changes still queued then were for those
   * streams, which catch up from storage, so they are skipped, and count against no later stream.
   */
  const queuedChanges = new Map<string, { count: number }>();
  const maxWaiting = deps.maxWaitingChanges ?? MAX_WAITING_CHANGES;
  const countQueued = new Set<string>();
  /**
   * Live changes held for a stream until its opening (counts, catch-up) has run: delivered before,
   * a change would move its cursor past what the catch-up is to send, and come before `unread`.
   */
  const held = new Map<StreamSession, LiveChange[]>();
  /**
   * How many resyncs each stream is owed (one per replacement of the subscriber whose catch-up has
   * not run yet): it stays held until the last. One found opening, or in an earlier resync, may have
   * read the tray before the subscription was back; its opening's or that resync's release leaves
   * it held for the next.
   */
  const owedResyncs = new Map<StreamSession, number>();
  /**
   * Streams whose opening has not written its own counts yet. Counts read for the user's other
   * streams skip them: a count queued before such a stream came (its user's earlier stream, just
   * closed by a page reload) would reach it before it is subscribed, and before its `reset`; its
   * own count, the same, would then be skipped as sent already.
   */
  const opening = new Set<StreamSession>();
  /**
   * Held streams a count skipped: its changes wait for the stream's catch-up, and a count ahead of
   * them would show activity the list does not have yet. Counted again once they are let go.
   */
  const countOwed = new Set<StreamSession>();
  let size = 0;
  const metrics = createStreamMetrics(deps.registry, () => size);
  const hooks = {
    messages: deps.messages,
    sent: (event: string) => metrics.events.inc({ event }),
    overflow: (session: StreamSession) => end(session),
    ...(deps.maxBufferedBytes === undefined ? {} : { maxBuffered: deps.maxBufferedBytes }),
  };

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

  /**
   * A record passing its expiry changes the counts without any write, so nothing is published:
   * each user is counted again when the first record their last count counted expires.
   */
  const recounts = createRecountSchedule({
    now,
    due: (userIds) => {
      for (const userId of userIds) queueCount(userId);
    },
  });

  /**
   * The user's counts, written to each stream whose last counts differ (not to one still opening
   * or held, but the one whose opening this is); recounted at their expiry.
   */
  function writeCounts(
    userId: string,
    { counts, nextExpiry }: CountedInbox,
    openingOf?: StreamSession,
  ): void {
    if (!byUser.has(userId)) return;
    recounts.set(userId, nextExpiry);
    // One key for both, so a change of either is sent (a seen mark changes the unseen count alone).
    const sent = `${counts.totalUnreadCount}/${counts.totalUnseenCount ?? ''}`;
    if (openingOf) opening.delete(openingOf);
    for (const session of byUser.get(userId) ?? []) {
      if (session.unread === sent || opening.has(session)) continue;
      if (session !== openingOf && held.has(session)) {
        countOwed.add(session);
        continue;
      }
      session.unread = sent;
      session.write('unread', counts);
    }
  }

  /** The opening's unread and unseen counts, also written to the user's other streams whose last counts differ. */
  async function sendUnread(session: StreamSession): Promise<void> {
    const { userId } = session.stream;
    if (!byUser.has(userId)) return;
    const counted = (await inboxCountsOf(deps.storage, [userId], now())).get(userId);
    if (counted) writeCounts(userId, counted, session);
  }

  /**
   * One count after a burst of changes, not one per change, and one statement for all the users
   * the burst touched (a snooze wake-up's batch touches hundreds): the users queued while the
   * messages of one read from Redis are handled are counted together once they are, and each
   * user's counts are written in the user's order, after the changes queued before them.
   */
  function queueCount(userId: string): void {
    if (countQueued.has(userId)) return;
    if (countQueued.size === 0) setImmediate(countQueuedUsers);
    countQueued.add(userId);
  }
  function countQueuedUsers(): void {
    const users = [...countQueued].filter((userId) => byUser.has(userId));
    countQueued.clear();
    for (let start = 0; start < users.length; start += COUNT_BATCH) {
      const batch = users.slice(start, start + COUNT_BATCH);
      const counts = inboxCountsOf(deps.storage, batch, now());
      // Read once for all; a failure is logged once per user by run(), like a failed count was,
      // and the users are counted again a little later: nothing else would (a quiet tray's next
      // change may never come, and a recount at an expiry is off the schedule once due).
      counts.catch(() => {
        const retryAt = now() + CATCH_UP_RETRY_MS * (1 + Math.random());
        for (const userId of batch) if (byUser.has(userId)) recounts.set(userId, retryAt);
      });
      for (const userId of batch) {
        void run(userId, async () => {
          const mine = (await counts).get(userId);
          if (mine) writeCounts(userId, mine);
        });
      }
    }
  }

  /**
   * Ends streams whose opening or catch-up failed (a pool timeout, a failover). Left open, a
   * stream's next live record would move its id past what it missed, and no reconnect would bring
   * that back. Ended, it reconnects from the id it holds, which nothing newer has moved, and catches
   * up then.
   */
  function endToResume(sessions: readonly StreamSession[], step: string, error: unknown): void {
    logger.warn({ err: (error as Error).message }, `live stream ${step} failed; its streams end and resume`);
    resumeLater(sessions);
  }

  /** Ends streams with the catch-up's reconnect hint: they resume from the ids they hold. */
  function resumeLater(sessions: readonly StreamSession[]): void {
    for (const session of sessions) end(session, CATCH_UP_RETRY_MS * (1 + Math.random()));
  }

  /** Ends streams whose live changes waited past maxWaiting (MAX_WAITING_CHANGES), to resume. */
  function endWaitedTooLong(sessions: readonly StreamSession[]): void {
    if (sessions.length === 0) return;
    logger.warn(
      { streams: sessions.length, maxWaitingChanges: maxWaiting },
      'live changes waited past the bound for their streams; the streams end and resume',
    );
    resumeLater(sessions);
  }

  const catchUpMs = deps.catchUpMs ?? CATCH_UP_MS;
  /**
   * readMissed for catchUpMs at most; then its streams end to resume, and it goes on to nothing
   * (each page waits for streams that are closed by then). Never rejects.
   */
  async function catchUp(
    userId: string,
    sessions: readonly StreamSession[],
    resyncFrom = Infinity,
    announcedClear?: number,
  ): Promise<void> {
    // readMissed ends its streams on its own failures and never rejects: only the bound throws here.
    await withTimeout(readMissed(userId, sessions, resyncFrom, announcedClear), catchUpMs, 'catch-up').catch(
      (error: unknown) => endToResume(sessions, 'catch-up', error),
    );
  }

  /**
   * Sends `sessions` what they missed since their cursors, from the database: a page at a time,
   * each taken by the client before the next is read, so a backlog of any size arrives and every
   * page moves the stream's id (a stream dropped midway resumes after what it got). `resyncFrom`:
   * a resync's, changes from then on may not have been announced (a failed publish); so may those
   * of a resync a stream was away for (one published after its last change, LostChanges).
   * `announcedClear`: the time of a delete-all announced to these open streams, owed to each that
   * was not told it, whatever its id's window (which decides only what a reconnect missed).
   */
  async function readMissed(
    userId: string,
    given: readonly StreamSession[],
    resyncFrom: number,
    announcedClear = Infinity,
  ): Promise<void> {
    // A stream that closed while this waited for the user's turn is owed nothing.
    const sessions = given.filter((session) => !session.closed);
    if (sessions.length === 0) return;
    // What each stream had delivered when its catch-up began: its own writes below do not count.
    const starts = new Map(sessions.map((session) => [session, copyCursor(session.stream.cursor)]));
    try {
      const lost = await deps.lost.of(userId);
      // Where each stream's changes may have gone unannounced: from the earliest change of each
      // resync it may have been away for. A stream that delivered a change written after a resync
      // went out (less the clocks' SETTLE_MS) was open and got that one.
      const lostFrom = new Map(
        [...starts].map(([session, start]) => [
          session,
          Math.min(
            resyncFrom,
            ...lost.filter((resync) => start.at < resync.at + SETTLE_MS).map((resync) => resync.since),
          ),
        ]),
      );
      // The announced time counts even when storing it failed (delete-all announces either way):
      // the records are gone, and a stream open then is owed the clear.
      const clearedAt = Math.max(
        await lastClear(deps.storage, userId),
        Number.isFinite(announcedClear) ? announcedClear : 0,
      );
      // A stream told `cleared` now empties its list. Every record stored now was written after the
      // delete, also one the stream sent before the `cleared` (a write landing between the delete
      // and its announcement): sent again, from the clear's time less the settle window.
      const resendAfter = new Map<StreamSession, number>();
      for (const [session, start] of starts) {
        // A clear announced to an open stream is owed to it if its client may have read its list
        // before the delete (the stream opened before it, give or take the clocks' settle window).
        const announced = clearedAt >= announcedClear && clearedAt > start.floor - SETTLE_MS;
        const owed = announced || mayOwe(start, clearedAt, lostFrom.get(session));
        if (clearedAt <= 0 || !owed || hasSeen(start, CLEARED_ID, clearedAt)) continue;
        session.cleared(clearedAt);
        resendAfter.set(session, clearedAt - SETTLE_MS);
      }
      const since = Math.min(
        ...[...starts.values()].map((cursor) => cursor.at - SETTLE_MS),
        ...resendAfter.values(),
        ...[...lostFrom.values()].map((from) => from - 1),
      );
      // Removals first, which no id keeps: a stream dropped midway then still gets them when it
      // resumes, whatever the records' pages have moved its id to. A record removed and stored
      // again since (new activity on it) is sent as stored instead, whatever its changedAt (one
      // stamped before the write waited for locks can be older than `since`); one stored again
      // after this read is in the pages below or announced after it, and sent again then.
      const logged = await deps.removals.since(userId, since);
      const { gone, stored } = await stillStored(userId, logged);
      // Sent here only when the pages will not have them: a state sent ahead of the pages would
      // move the stream's id past the pages still to come, and a stream dropped midway would
      // resume after them. The others come in the pages, in order, sent even if delivered before.
      const early = [...stored.values()].filter((record) => record.changedAt <= since);
      const again = new Set([...gone, ...stored.keys()]);
      if (gone.length > 0 || early.length > 0)
        await Promise.all(
          sessions.map((session) =>
            session.paced(() => {
              session.removed(gone);
              for (const record of early) session.record(record, true);
            }),
          ),
        );
      // What was settled when the pages were read: states stamped before then have all landed.
      const settledBefore = now() - SETTLE_MS;
      for await (const page of streamCatchUp(deps.storage, userId, since, now())) {
        await Promise.all(
          [...starts].map(([session, start]) =>
            session.paced(() => {
              const after = resendAfter.get(session) ?? Infinity;
              const from = lostFrom.get(session);
              for (const record of page) {
                if (record.changedAt > after || again.has(record.key)) session.record(record, true);
                else if (
                  mayOwe(start, record.changedAt, from) &&
                  !passed(start, record.key, record.changedAt)
                ) {
                  if (!hasSeen(start, record.key, record.changedAt)) session.record(record);
                  // A resync: a record sent since only as a bare mark (its earlier state taken as
                  // delivered) may lack the very state whose announcement was lost.
                  else if (Number.isFinite(from) && seenOnlyAsMark(start, record.key))
                    session.record(record, true);
                }
                // Every state up to this one in the pages' order is delivered now: the next
                // event's id says so.
                passThrough(session.stream.cursor, record, settledBefore);
              }
            }),
          ),
        );
        if (sessions.every((session) => session.closed)) return;
      }
    } catch (error) {
      endToResume(sessions, 'catch-up', error);
    }
  }

  subscriber.on('message', (_channel: string, message: string) => {
    for (const change of parseChanges(message)) {
      if (!byUser.has(change.userId)) continue;
      if (change.kind === 'replaced') {
        const session = sessionOf(change.userId, change.streamId);
        if (session) endReplaced(session);
        continue;
      }
      const { userId } = change;
      const queued = queuedChanges.get(userId) ?? { count: 0 };
      if (queued.count >= maxWaiting) {
        queuedChanges.delete(userId);
        endWaitedTooLong([...(byUser.get(userId) ?? [])]);
        continue;
      }
      queued.count += 1;
      queuedChanges.set(userId, queued);
      void run(userId, async () => {
        queued.count -= 1;
        if (queuedChanges.get(userId) !== queued) return;
        if (queued.count === 0) queuedChanges.delete(userId);
        const live: StreamSession[] = [];
        for (const session of byUser.get(userId) ?? []) {
          const waiting = held.get(session);
          if (!waiting) live.push(session);
          else if (waiting.length < maxWaiting) waiting.push(change);
          else endWaitedTooLong([session]);
        }
        await deliver(userId, live, change);
      });
      queueCount(userId);
    }
  });

  /**
   * One live change to these streams of the user. A clear is followed by the records stored since
   * (catchUp), which a write between the delete and its announcement may have sent before it; a
   * resync is a catch-up from its lost changes' time (a failed publish, change-publisher.ts). A
   * stream behind a record a mark changed (its earlier state not delivered: that announcement is
   * still on its way, or was lost) catches up, which sends the record as stored, mark included.
   */
  async function deliver(
    userId: string,
    sessions: readonly StreamSession[],
    change: LiveChange,
  ): Promise<void> {
    if (change.kind === 'cleared') {
      await catchUp(userId, sessions, Infinity, change.at);
      return;
    }
    if (change.kind === 'resync') {
      await catchUp(userId, sessions, change.since);
      return;
    }
    if (change.kind === 'removed' || change.kind === 'record') {
      try {
        await deliverAsStored(userId, sessions, change);
      } catch (error) {
        // Not sent: the stream resumes from its id, and its catch-up reads the removal log.
        endToResume(sessions, 'removal check', error);
      }
      return;
    }
    const behind = sessions.filter((session) => session.deliver(change));
    if (behind.length > 0) await catchUp(userId, behind);
  }

  /**
   * Which of `keys` the user's storage holds now (stored again after a removal), and which are gone.
   * A removal and a new write of one record by two workers are announced in either order, and a
   * state's changedAt is stamped before its write waits for locks, so neither the order of the
   * announcements nor the states' times tell which came last; storage does. Each announcement is
   * published after its write landed, and each user's are handled in order (run), so whatever
   * lands after this read is announced and handled after it.
   */
  async function stillStored(
    userId: string,
    keys: readonly string[],
  ): Promise<{ gone: string[]; stored: Map<string, InboxRecord> }> {
    if (keys.length === 0) return { gone: [], stored: new Map() };
    const found = await deps.storage.records.byKeys(userId, keys, now());
    const stored = new Map(found.map((record) => [record.key, record]));
    return { gone: keys.filter((key) => !stored.has(key)), stored };
  }

  /**
   * Removals, and records a stream told removed or cleared, as storage has them (stillStored): a
   * removal is sent for the records still gone and the stored state for those stored again since;
   * a later state of a record a stream told removed, or a state no later than a `cleared` it sent,
   * is sent only if stored, as stored (a state announced late would otherwise bring back a record
   * that is gone). Every other record as it comes.
   */
  async function deliverAsStored(
    userId: string,
    sessions: readonly StreamSession[],
    change: Extract<LiveChange, { kind: 'removed' | 'record' }>,
  ): Promise<void> {
    if (change.kind === 'removed') {
      const { gone, stored } = await stillStored(userId, change.ids);
      for (const session of sessions) {
        session.removed(gone);
        for (const record of stored.values()) session.record(record, true);
      }
      return;
    }
    const doubtful = change.records
      .filter((record) => sessions.some((session) => session.doubts(record)))
      .map((record) => record.key);
    const { stored } = await stillStored(userId, doubtful);
    for (const session of sessions) {
      for (const record of change.records) {
        if (!session.doubts(record)) session.record(record);
        else {
          const current = stored.get(record.key);
          // Again, whatever the stream sent, only after its removal: after a `cleared`, the
          // catch-up sent what was stored then, and the cursor knows which states those were.
          if (current) session.record(current, session.removedOf(record.key));
        }
      }
    }
  }

  /** Delivers the changes held for a session, which now takes them as they come. */
  async function release(session: StreamSession): Promise<void> {
    if (owedResyncs.has(session)) return;
    const waiting = held.get(session);
    held.delete(session);
    // What its catch-up already sent is in its cursor: delivered again, it is skipped.
    for (const change of waiting ?? []) await deliver(session.stream.userId, [session], change);
    if (countOwed.delete(session)) queueCount(session.stream.userId);
  }

  /** Forgets a session (its response closed or is being ended) and frees its slot. */
  function remove(session: StreamSession): void {
    const { userId, streamId } = session.stream;
    const sessions = byUser.get(userId);
    held.delete(session);
    owedResyncs.delete(session);
    opening.delete(session);
    countOwed.delete(session);
    if (!sessions?.delete(session)) return;
    if (sessions.size === 0) {
      byUser.delete(userId);
      shards.removeUser(userId);
      recounts.set(userId, undefined);
    }
    size -= 1;
    releaseSlot(userId, streamId);
  }

  /** Frees the stream's slot; one not freed (Redis out of reach) lapses with its lease. */
  function releaseSlot(userId: string, streamId: string): void {
    deps.slots.release(userId, streamId).catch((error: unknown) => {
      logger.warn({ err: (error as Error).message }, 'stream slot not released; its lease lapses');
    });
  }

  /** The user's stream of that id, when this instance holds it. */
  function sessionOf(userId: string, streamId: string): StreamSession | undefined {
    for (const session of byUser.get(userId) ?? []) if (session.stream.streamId === streamId) return session;
    return undefined;
  }

  /**
   * Ends these streams of the user, whose places a newer stream took, with a last `replaced` event:
   * here when this instance holds them, else on the one that does.
   */
  function replace(userId: string, streamIds: readonly string[]): void {
    const elsewhere: LiveChange[] = [];
    for (const streamId of streamIds) {
      const session = sessionOf(userId, streamId);
      if (session) endReplaced(session);
      else elsewhere.push({ kind: 'replaced', userId, streamId });
    }
    if (elsewhere.length > 0) void deps.announce(elsewhere);
  }

  /** A stream that never opened: its slot goes, and the places it took are theirs again. */
  function giveBack(stream: OpenStream, replaced: readonly string[]): void {
    const { userId, streamId } = stream;
    if (replaced.length === 0) {
      releaseSlot(userId, streamId);
      return;
    }
    deps.slots.restore(userId, streamId, replaced).catch((error: unknown) => {
      logger.warn(
        { err: (error as Error).message },
        'a stream that never opened kept its slot and the places it took; they lapse, or end at their next renewal',
      );
    });
  }

  /** A newer stream of the user took this one's place: the last event, with an id to resume from. */
  function endReplaced(session: StreamSession): void {
    if (session.closed) return;
    session.write('replaced', { reason: 'stream-limit', reconnect: false });
    end(session, REPLACED_RETRY_MS);
  }

  function end(session: StreamSession, retryMs?: number): void {
    clearTimeout(expiries.get(session));
    expiries.delete(session);
    remove(session);
    session.close(retryMs);
  }

  /**
   * A stream authorised by a token lasts no longer than the token: at its `exp` the client gets
   * a last `expired` event (with an id, so it resumes where it left off) and the stream ends; it
   * reconnects with a fresh token or ticket. setTimeout holds at most ~24.8 days: re-armed beyond.
   */
  const expiries = new Map<StreamSession, NodeJS.Timeout>();
  function armExpiry(session: StreamSession, expiresAt: number): void {
    const delay = expiresAt - Date.now();
    if (delay <= 0) {
      session.write('expired', { reason: 'token-expired', reconnect: true });
      end(session);
      return;
    }
    const timer = setTimeout(() => armExpiry(session, expiresAt), Math.min(delay, MAX_TIMER_MS));
    timer.unref();
    expiries.set(session, timer);
  }

  // The subscription's connection was replaced (Redis came back, or a cluster moved it to another
  // node): subscriptions are renewed and every stream catches up on what it missed meanwhile. Its
  // live changes are held from this moment (before the new connection can deliver one) until its
  // catch-up has run: the catch-ups run a few users at a time, and a change delivered to a stream
  // whose catch-up is still to come would move its cursor past what it missed.
  onSubscriberReplaced(subscriber, () =>
    owe(
      () => true,
      async () => {
        await shards.renew();
        return true;
      },
    ),
  );
  /**
   * Holds the live changes of the streams of the users `which` picks, runs `subscribe`, and catches
   * the streams up when it answers true (else only lets their held changes go).
   */
  function owe(which: (userId: string) => boolean, subscribe: () => Promise<boolean>): void {
    const owed = new Map<string, StreamSession[]>();
    for (const [userId, sessions] of byUser) {
      if (!which(userId)) continue;
      for (const session of sessions) {
        // A stream still opening, or still in an earlier resync, is held already: its catch-up may
        // have read the tray before this connection was back, so it is owed this one too, after it.
        if (!held.has(session)) held.set(session, []);
        owedResyncs.set(session, (owedResyncs.get(session) ?? 0) + 1);
      }
      if (sessions.size > 0) owed.set(userId, [...sessions]);
    }
    void resync(owed, subscribe);
  }
  async function resync(
    owed: Map<string, StreamSession[]>,
    subscribe: () => Promise<boolean>,
  ): Promise<void> {
    const taken = await subscribe();
    // A pool, not batches: a user whose catch-up is slow (a long backlog read slowly, a client
    // that stopped reading) holds one place, and the users after it go on through the others.
    // The place is taken in the user's order, once the user's earlier work is done: a user whose
    // stream is still opening (its own catch-up, maybe as slow) waits for it without holding one.
    const limit = pLimit(RESYNC_PARALLEL);
    await Promise.all(
      [...owed.keys()].map((userId) =>
        run(userId, () =>
          limit(async () => {
            const sessions = (owed.get(userId) ?? []).filter((session) => !session.closed);
            try {
              // Refused again: the try that takes catches up on everything missed since.
              if (taken) {
                queueCount(userId);
                await catchUp(userId, sessions);
              }
            } finally {
              for (const session of sessions) {
                const owes = (owedResyncs.get(session) ?? 1) - 1;
                if (owes > 0) {
                  owedResyncs.set(session, owes);
                  continue;
                }
                owedResyncs.delete(session);
                await release(session);
              }
            }
          }),
        ),
      ),
    );
  }

  const quietMs = deps.quietMs ?? QUIET_MS;
  /**
   * Moves a quiet stream's id forward (QUIET_MS), in the user's order: never while a catch-up of
   * the stream is under way or owed (it would skip the rest of it on a reconnect), nor while the
   * subscription is down or the user's channel refused (changes published meanwhile reach no
   * stream here, and the catch-up when it comes back starts from the cursor).
   */
  function moveQuiet(session: StreamSession): void {
    void run(session.stream.userId, async () => {
      if (held.has(session) || !isSubscriberConnected(subscriber) || shards.refused(session.stream.userId))
        return;
      session.moveQuiet(now(), quietMs);
    });
  }

  /** A heartbeat's renewals still under way (a slow Redis): the next heartbeat renews none. */
  let renewing = false;
  const heartbeat = setInterval(() => {
    const open: StreamSession[] = [];
    for (const sessions of byUser.values()) {
      for (const session of sessions) {
        session.comment('heartbeat');
        if (session.stream.cursor.at < now() - quietMs) moveQuiet(session);
        // Ended by its heartbeat (its client stopped reading): its lease is not taken again.
        if (!session.closed) open.push(session);
      }
    }
    if (renewing) return;
    renewing = true;
    // A stream whose place was taken and whose holder was not told (the announcement is
    // published at most once) learns it here.
    void renewLeases(
      deps.slots,
      open.map((session) => session.stream),
      (index) => {
        const session = open[index];
        if (session) endReplaced(session);
      },
      (index) => {
        const session = open[index];
        return session !== undefined && byUser.get(session.stream.userId)?.has(session) === true;
      },
    ).finally(() => {
      renewing = false;
    });
  }, deps.heartbeatMs ?? 15_000);
  heartbeat.unref();
  // A subscription that died without a word is found within a heartbeat and the timeout.
  const stopWatching = watchSubscriber(subscriber, {
    intervalMs: deps.heartbeatMs ?? 15_000,
    timeoutMs: deps.subscriberPingTimeoutMs ?? SUBSCRIBER_PING_TIMEOUT_MS,
    logger,
  });
  // A banned user's streams end within a sweep of the ban reaching this instance's ban cache.
  const banSweep = setInterval(() => {
    for (const [userId, sessions] of byUser) {
      if (deps.bans.isBanned(userId)) for (const session of [...sessions]) end(session);
    }
  }, deps.banSweepMs ?? 1_000);
  banSweep.unref();
  /** The retry hint close() gave its streams; set once the hub is closed. */
  let closedWith: number | undefined;

  return {
    get size() {
      return size;
    },
    open(res, stream, replaced = []) {
      const session = createStreamSession(res, stream, hooks);
      // A stream still being authorised when shutdown began arrives after close(): ended at once
      // with the shutdown's retry hint, as the streams close() ended, instead of staying open with
      // nothing to tell and holding the listener's drain.
      if (closedWith !== undefined) {
        giveBack(stream, replaced);
        session.close(closedWith * (1 + Math.random() * 4));
        return;
      }
      const sessions = byUser.get(stream.userId) ?? new Set<StreamSession>();
      const ready = sessions.size === 0 ? shards.addUser(stream.userId) : shards.ready(stream.userId);
      sessions.add(session);
      byUser.set(stream.userId, sessions);
      size += 1;
      res.on('close', () => end(session));
      // The client may have gone while the stream was being authorised: its 'close' has passed.
      if (!res.socket || res.socket.destroyed) {
        // First: its own lease goes in the same step (end's release after it finds nothing).
        if (replaced.length > 0) giveBack(stream, replaced);
        end(session);
        return;
      }
      // A token that expired while the stream was being authorised (slow Redis calls): the stream
      // never lives, so the places it took are given back rather than their streams ended for it.
      if (stream.expiresAt !== undefined && stream.expiresAt <= Date.now()) {
        if (replaced.length > 0) giveBack(stream, replaced);
        session.write('expired', { reason: 'token-expired', reconnect: true });
        end(session);
        return;
      }
      // After the new stream is open: the user's subscription on this instance stays in place.
      replace(stream.userId, replaced);
      if (stream.expiresAt !== undefined) armExpiry(session, stream.expiresAt);
      held.set(session, []);
      opening.add(session);
      void run(stream.userId, async () => {
        try {
          // Subscribed before anything is read, so no change falls between the read and the feed
          // (the client's reload after `reset` included).
          await ready;
          // Gone while it waited for the user's turn (a client reconnecting in a loop): nothing
          // to read for it.
          if (session.closed) return;
          if (stream.start === 'reset') session.write('reset', {});
          await sendUnread(session);
          if (stream.start === 'resume') await catchUp(stream.userId, [session]);
          // A record the last delete-all removed, announced after it, is not to come back.
          else session.clearedBefore(await lastClear(deps.storage, stream.userId));
        } catch (error) {
          endToResume([session], 'opening', error);
        } finally {
          opening.delete(session);
          await release(session);
        }
      });
    },
    async close(retryMs) {
      closedWith = retryMs;
      shards.stop();
      clearInterval(heartbeat);
      stopWatching();
      clearInterval(banSweep);
      recounts.stop();
      for (const sessions of [...byUser.values()]) {
        for (const session of [...sessions]) end(session, retryMs * (1 + Math.random() * 4));
      }
      subscriber.disconnect();
    },
  };
}
