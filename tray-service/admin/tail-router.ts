import { Router, type Request } from 'express';
import { finished } from 'node:stream';
import { AppError } from '../../shared/errors/app-error.ts';
import { refuseHead } from '../../shared/http/error-middleware.ts';
import type { Logger } from '../../shared/logging/create-logger.ts';
import { sseComment, sseEvent, sseRetry } from '../http/sse-format.ts';
import { tailEvents } from '../use-cases/events-tail.ts';
import { toEventView } from './event-view.ts';
import { parseEventsFilter } from './parse-events-filter.ts';
import type { RedisEventsFeed } from './redis-events-feed.ts';
import { createConcurrencySlots } from './concurrency-slots.ts';
import { createTailBacklog } from './tail-backlog.ts';
import { endWithCredential } from './end-with-credential.ts';
import { admittedCaller } from './require-admin.ts';

export interface TailRouterDeps {
  feed: RedisEventsFeed;
  /** Open tails per instance at most: each holds a connection. */
  maxTails?: number;
  /** ADMIN_TAILS_PER_ADMIN: open tails per admin on this instance, so one cannot take them all. */
  tailsPerAdmin?: number;
  /** A comment line this often keeps proxies from closing an idle tail; the credential is checked again then. */
  heartbeatMs?: number;
  /**
   * Bytes a tail may have waiting for its reader behind the event it is taking (default 1 MiB):
   * past them the reader is not keeping up, and the tail is cut off rather than held in memory.
   */
  maxBufferedBytes?: number;
  /**
   * How long an ended tail may wait for its reader to take the end (default 5 s): a reader that
   * stopped reading with less than the cap waiting never takes it, and the response would hold its
   * place and socket for as long as the connection stays up. Past it the connection is dropped.
   */
  endGraceMs?: number;
  /** Told of each tail cut off for falling behind, or dropped at its end. */
  logger?: Logger;
  /**
   * Whether the request's credential still proves an admin (signed out, expired: no); undefined
   * when that cannot be checked now (Redis unreachable): the tail stays until a check says no.
   */
  stillAdmin: (req: Request) => Promise<boolean | undefined>;
  clock?: () => number;
}

/**
 * GET /admin/events/tail: server-sent events, one `stored` event (id: the event's key, data: its
 * view) for each newly applied event that passes the list's filters, and a heartbeat comment
 * between them (docs/operations.md#events-console-api). Nothing is replayed on reconnect: the list
 * shows what a tail missed. A tail carries every payload, so it lasts no longer than the credential
 * that opened it: it ends when that credential's session or JWT expires, and at the first
 * heartbeat after a sign-out. A reader that falls more than `maxBufferedBytes` behind (stopped
 * reading, or slower than the events) is cut off: the client reconnects, and the list shows what it
 * missed. A tail that ends while its reader takes nothing is dropped `endGraceMs` later.
 */
export function createTailRouter(deps: TailRouterDeps): Router {
  const router = Router();
  const maxTails = deps.maxTails ?? 100;
  const heartbeatMs = deps.heartbeatMs ?? 15_000;
  const maxBuffered = deps.maxBufferedBytes ?? 1 << 20;
  const perAdmin = createConcurrencySlots(deps.tailsPerAdmin ?? 10);
  const clock = deps.clock ?? Date.now;
  const endGraceMs = deps.endGraceMs ?? 5_000;

  // A HEAD would open a tail whose body Node drops: it would never end, holding a place (refuseHead).
  router.get('/events/tail', refuseHead, async (req, res) => {
    const filter = parseEventsFilter(req.query);
    if (deps.feed.listeners >= maxTails) {
      throw new AppError('TOO_MANY_STREAMS', `at most ${maxTails} open tails on this instance`, {
        headers: { 'Retry-After': '15' },
      });
    }
    const caller = admittedCaller(res);
    // ADMIN_TOKEN's holders are one admin; each admin JWT's subject is one.
    const release = perAdmin.take(
      caller.principal.kind === 'jwt' ? `jwt:${caller.principal.subject}` : 'token',
    );
    if (release === undefined) {
      throw new AppError('TOO_MANY_STREAMS', 'every open tail this admin may have on this instance is open', {
        headers: { 'Retry-After': '15' },
      });
    }
    // Once the response is over, also when its client left before this route ran (its 'close'
    // passed while the session was looked up).
    finished(res, () => release());
    // What the stream holds: ended once, by the client leaving or the feed closing.
    const stream: {
      open: boolean;
      stop?: () => void;
      heartbeat?: NodeJS.Timeout;
      unwatch?: () => void;
    } = { open: true };
    const backlog = createTailBacklog();
    const finish = () => {
      if (!stream.open) return;
      stream.open = false;
      clearInterval(stream.heartbeat);
      stream.unwatch?.();
      stream.stop?.();
      // A reader that stopped reading never takes what is buffered for it: end() would hold those
      // bytes and the socket for as long as the connection stays up.
      if (backlog.behind(res.writableLength) > maxBuffered) {
        res.destroy();
        return;
      }
      res.end();
      // Neither does one with less waiting: the end would sit behind what it never takes.
      setTimeout(() => {
        if (res.writableFinished || res.destroyed) return;
        deps.logger?.info(
          { buffered: res.writableLength },
          'events tail dropped: its reader took nothing at its end',
        );
        res.destroy();
      }, endGraceMs).unref();
    };
    const write = (text: string) => {
      backlog.wrote(Buffer.byteLength(text));
      res.write(text);
    };
    // Every announced event is written as it comes; a reader that does not keep up would otherwise
    // have them all buffered in this process (up to maxTails of them). What decides is what waits
    // behind the message the reader is taking now (tail-backlog.ts), never that message itself: an
    // event larger than the cap (a payload up to the receiver's body limit) goes whole to a reader
    // that keeps up, and the events after it wait for it.
    const send = (text: string) => {
      if (!stream.open) return;
      write(text);
      const behind = backlog.behind(res.writableLength);
      if (behind > maxBuffered) {
        deps.logger?.info(
          { buffered: res.writableLength, behind },
          'events tail cut off: its reader fell behind',
        );
        finish();
      }
    };
    res.status(200).set({
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      // Proxies that buffer responses (nginx) would hold the events back.
      'X-Accel-Buffering': 'no',
    });
    finished(res, finish);
    // Subscribed before the first byte: an event applied once the client sees the stream open is
    // never missed.
    stream.stop = await tailEvents(deps.feed, filter, {
      event: (event) => send(sseEvent('stored', event.key, toEventView(event))),
      end: finish,
    });
    if (!stream.open) {
      stream.stop();
      return;
    }
    res.flushHeaders();
    write(sseRetry(3_000));
    write(sseComment('tail open'));
    stream.unwatch = endWithCredential(
      req,
      caller,
      { stillAdmin: deps.stillAdmin, checkMs: heartbeatMs, clock },
      finish,
    );
    stream.heartbeat = setInterval(() => send(sseComment('heartbeat')), heartbeatMs);
    stream.heartbeat.unref();
  });

  return router;
}
