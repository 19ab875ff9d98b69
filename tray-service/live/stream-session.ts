import type { Response } from 'express';
import type { InboxState } from '../domain/inbox-state.ts';
import type { TrayRecord } from '../domain/tray-record.ts';
import type { StreamEventData, StreamEventName } from '../http/api-schema/stream-schemas.ts';
import { toNotificationRecord } from '../http/to-notification-record.ts';
import type { MessageRenderer } from '../messages/message-renderer.ts';
import type { LiveChange, ReadMark } from './live-change.ts';
import { sseComment, sseEvent, sseId, sseRetry } from '../http/sse-format.ts';
import {
  advanceQuiet,
  CLEARED_ID,
  encodeStreamCursor,
  hasDelivered,
  hasSeen,
  markSeen,
  passed,
  seenVersion,
  type StreamCursor,
} from './stream-cursor.ts';
import { SETTLE_MS } from '../domain/settle-window.ts';

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
  /** When the caller's token expires (epoch ms): the stream ends then (docs/live-tray.md). */
  expiresAt?: number;
}

/** One open stream: writes events and keeps its cursor, so it never sends a state twice. */
export interface StreamSession {
  readonly stream: OpenStream;
  /** The last counts sent, as "unread/unseen" (undefined before the first). */
  unread: string | undefined;
  readonly closed: boolean;
  /** One event; its data is what the tray API's schema declares for that event (streamEvents). */
  write<E extends StreamEventName>(event: E, data: StreamEventData<E>): void;
  /**
   * A record's state, with its inbox state when the change read it (a mark, a wake-up). `again`:
   * even if the stream sent this state already (the client emptied its list since, on `cleared`).
   */
  record(record: TrayRecord & Partial<InboxState>, again?: boolean): void;
  /**
   * Tells the client these records are gone. The stream remembers the newest REMEMBERED_REMOVALS
   * of them (doubts): a later state of one is sent only as storage holds it (stream-hub.ts).
   */
  removed(ids: readonly string[]): void;
  /**
   * Whether this state of a record may be gone by what this stream told its client: the record
   * was removed (one of its latest removals), or the state is no later than a `cleared` the
   * stream sent, or a delete-all made before it opened (clearedBefore), within the clocks'
   * SETTLE_MS: that delete may have removed it, announced late.
   */
  doubts(record: { key: string; changedAt: number }): boolean;
  /** Whether this stream told its client the record was removed (one of its latest removals). */
  removedOf(id: string): boolean;
  cleared(at: number): void;
  /**
   * A delete-all whose late-announced states this stream doubts (doubts), without sending it: one
   * made before it opened (its client read its list after it); `cleared` notes the one it sends.
   */
  clearedBefore(at: number): void;
  /**
   * Writes what the stream has not sent of `change`. True when it is behind a record a mark
   * changed: the mark alone would leave the client without the record, or with an older state of
   * it, so the caller catches the stream up from storage instead (docs/live-tray.md).
   */
  deliver(change: LiveChange): boolean;
  comment(text: string): void;
  /**
   * A quiet stream: moves its cursor up to `quietMs` before `now` (stream-cursor.ts, QUIET_MS) and
   * sends the new id on its own, so a reconnect after a long quiet resumes instead of resetting.
   */
  moveQuiet(now: number, quietMs: number): void;
  /**
   * Writes what `send` writes (a page of a catch-up) without the slow-client bound, then waits
   * until the client has taken it, so a backlog larger than the bound still arrives; a client that
   * has not taken it all STALL_MS after it was written is ended as a slow one (the page goes to the
   * socket as one write: progress inside it is not seen).
   */
  paced(send: () => void): Promise<void>;
  /** Marks the session closed; with `retryMs`, the client is first told when to reconnect. */
  close(retryMs?: number): void;
}

export interface SessionHooks {
  messages: MessageRenderer;
  /** Each event written (metrics). */
  sent: (event: string) => void;
  /** The client reads too slowly: the hub ends the stream (the client reconnects and resumes). */
  overflow: (session: StreamSession) => void;
  /** Bytes buffered for a client past which it reads too slowly (MAX_BUFFERED unless told). */
  maxBuffered?: number;
}

/** Removals a stream remembers (doubts), newest kept: a few kilobytes a stream at most. */
export const REMEMBERED_REMOVALS = 256;

/** A stream whose client reads slower than this many buffered bytes is closed. */
export const MAX_BUFFERED = 1 << 20;
/** How long an ended stream's last bytes may wait for a client that does not read them. */
const END_GRACE_MS = 10_000;
/** How long a page of a catch-up may wait for a client that does not read it. */
const STALL_MS = 10_000;

/** Starts the event stream on `res` (status, headers) and returns its session. */
export function createStreamSession(res: Response, stream: OpenStream, hooks: SessionHooks): StreamSession {
  res.status(200).set({
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    // nginx and similar proxies would otherwise buffer the stream.
    'X-Accel-Buffering': 'no',
    'Content-Language': stream.locale,
  });
  res.flushHeaders();
  const { cursor } = stream;
  let closed = false;
  /** Inside paced(): the bytes are bounded by a page, and the caller waits for them to go. */
  let pacing = false;
  /** A paced page waits for its client (up to STALL_MS, which judges it): heartbeats do not. */
  let pageWaiting = false;
  /**
   * A stream opened to reset gives no id until its `reset`: a client whose connection drops before
   * it keeps its old id, and its reconnect is told to reset again. The stream's own id (a fresh
   * one) owes it nothing from before it opened, so the reset would be lost.
   */
  let idWithheld = stream.start === 'reset';
  /** The records this stream told removed, oldest first (REMEMBERED_REMOVALS at most). */
  const removedIds = new Set<string>();
  /**
   * The time of the latest `cleared` this stream or the one it resumes sent, as far as its id
   * remembers, or of the delete-all made before it opened (-Infinity: none).
   */
  let lastCleared = seenVersion(cursor, CLEARED_ID) ?? -Infinity;

  /**
   * The keys of the marked states this stream has not sent yet, now counted as sent. A mark of a
   * state the stream has not delivered is left out and not counted (`behind`): the record's own
   * announcement may still be on its way, or lost, and the stream is to send the record instead.
   */
  function unsent(records: readonly ReadMark[]): { ids: string[]; behind: boolean } {
    const ids: string[] = [];
    let behind = false;
    for (const record of records) {
      if (hasSeen(cursor, record.key, record.changedAt)) continue;
      if (!hasDelivered(cursor, record.key, record.changedBefore)) {
        behind = true;
        continue;
      }
      markSeen(cursor, record.key, record.changedAt, record.changedAt, true);
      ids.push(record.key);
    }
    return { ids, behind };
  }

  const maxBuffered = hooks.maxBuffered ?? MAX_BUFFERED;
  /** After each write: a client past maxBuffered reads too slowly (a paced send waits instead). */
  const checkBuffered = () => {
    if (!pacing && res.writableLength > maxBuffered) hooks.overflow(session);
  };
  const session: StreamSession = {
    stream,
    unread: undefined,
    get closed() {
      return closed;
    },
    write(event, data) {
      if (closed) return;
      if (event === 'reset') idWithheld = false;
      res.write(sseEvent(event, idWithheld ? undefined : encodeStreamCursor(cursor), data));
      hooks.sent(event);
      checkBuffered();
    },
    record(record, again = false) {
      // A record's change time tells its states apart (docs/live-tray.md, "Event ids").
      if (
        !again &&
        (hasSeen(cursor, record.key, record.changedAt) || passed(cursor, record.key, record.changedAt))
      )
        return;
      markSeen(cursor, record.key, record.changedAt, record.changedAt);
      session.write('record', toNotificationRecord(record, hooks.messages.render(record, stream.locale)));
    },
    removed(ids) {
      if (ids.length === 0) return;
      for (const id of ids) {
        removedIds.delete(id); // re-inserted last: the set stays oldest first
        removedIds.add(id);
      }
      for (const id of removedIds) {
        if (removedIds.size <= REMEMBERED_REMOVALS) break;
        removedIds.delete(id);
      }
      session.write('removed', { ids: [...ids] });
    },
    doubts: (record) => removedIds.has(record.key) || record.changedAt <= lastCleared + SETTLE_MS,
    removedOf: (id) => removedIds.has(id),
    cleared(at) {
      if (hasSeen(cursor, CLEARED_ID, at)) return;
      markSeen(cursor, CLEARED_ID, at, at);
      session.clearedBefore(at);
      session.write('cleared', {});
    },
    clearedBefore(at) {
      lastCleared = Math.max(lastCleared, at);
    },
    deliver(change) {
      switch (change.kind) {
        case 'record':
          for (const record of change.records) session.record(record);
          return false;
        case 'removed':
          // A record that is gone has no change time to order: the hub checks storage first.
          session.removed(change.ids);
          return false;
        case 'read':
        case 'seen':
        case 'archived': {
          const { ids, behind } = unsent(change.records);
          if (ids.length > 0) session.write(change.kind, { ids });
          return behind;
        }
        case 'snoozed': {
          const { ids, behind } = unsent(change.records);
          if (ids.length > 0) session.write('snoozed', { ids, until: change.until });
          return behind;
        }
        case 'cleared':
          session.cleared(change.at);
          return false;
        case 'last-read':
          return false;
        case 'resync':
          // Nothing of its own to send: the hub catches the stream up from storage.
          return false;
        case 'replaced':
          // The hub ends the replaced stream itself; no tray change to send.
          return false;
      }
    },
    // A quiet stream gets only these: a client that stopped reading it (a zero TCP window) is
    // found by them, or its buffer would grow by every heartbeat for as long as it stays connected.
    comment(text) {
      if (closed) return;
      res.write(sseComment(text));
      if (!pageWaiting) checkBuffered();
    },
    moveQuiet(now, quietMs) {
      if (closed || idWithheld || !advanceQuiet(cursor, now, quietMs)) return;
      res.write(sseId(encodeStreamCursor(cursor)));
      if (!pageWaiting) checkBuffered();
    },
    async paced(send) {
      pacing = true;
      try {
        send();
      } finally {
        pacing = false;
      }
      if (closed || !res.writableNeedDrain) return;
      pageWaiting = true;
      const taken = await new Promise<boolean>((resolve) => {
        const done = (drained: boolean) => {
          pageWaiting = false;
          clearTimeout(stall);
          res.off('drain', onDrain);
          res.off('close', onClose);
          resolve(drained);
        };
        const onDrain = () => done(true);
        const onClose = () => done(true);
        const stall = setTimeout(() => done(false), STALL_MS);
        res.on('drain', onDrain);
        res.on('close', onClose);
      });
      if (!taken) hooks.overflow(session);
    },
    close(retryMs) {
      if (closed) return;
      closed = true;
      // A client that stopped reading never takes what is buffered: end() would wait for it for ever,
      // holding the bytes and the socket (an overflowed stream's over a megabyte). Dropped at once
      // then, and after END_GRACE_MS otherwise; the client reconnects and resumes from its last id.
      if (res.writableLength > maxBuffered) {
        res.destroy();
        return;
      }
      if (retryMs !== undefined) res.write(sseRetry(retryMs));
      res.end();
      if (res.writableFinished) return;
      const drop = setTimeout(() => res.destroy(), END_GRACE_MS);
      drop.unref();
      res.once('close', () => clearTimeout(drop));
    },
  };
  // First, before the counts: a client that reconnects names this id in `replaces`, so this stream,
  // if its server still holds it, gives the new one its place rather than another tab's.
  session.write('opened', { streamId: stream.streamId });
  return session;
}
