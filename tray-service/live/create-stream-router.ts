import { Router, type Request, type RequestHandler } from 'express';
import { AppError } from '../../shared/errors/app-error.ts';
import { DAY_MS } from '../../shared/time/durations.ts';
import { methodNotAllowed, refuseHead } from '../../shared/http/error-middleware.ts';
import { callerExpiresAt, callerId } from '../http/auth/require-user.ts';
import type { TokenVerifier } from '../http/auth/create-token-verifier.ts';
import { noBody, noInput } from '../http/no-input.ts';
import { parseInput } from '../http/parse-input.ts';
import type { MessageRenderer } from '../messages/message-renderer.ts';
import { streamCaller } from './stream-caller.ts';
import { decodeStreamCursor, freshCursor, isAheadOf, type StreamCursor } from './stream-cursor.ts';
import type { StreamHub } from './stream-hub.ts';
import { streamQuery, type StreamTicketBody } from '../http/api-schema/stream-schemas.ts';
import { newStreamId, type StreamSlots } from './stream-slots.ts';
import type { StreamTickets } from './stream-tickets.ts';

export interface StreamRouterDeps {
  hub: StreamHub;
  /** STREAMS_PER_INSTANCE: with this many open, the next stream is refused. */
  streamsPerInstance: number;
  slots: StreamSlots;
  tickets: StreamTickets;
  messages: MessageRenderer;
  verifyToken: TokenVerifier;
  /** Run after the caller is known: the ban check and the per-user rate limit. */
  afterCaller: RequestHandler[];
  /** Bearer auth, ban check, rate limit: the guard of every tray call. */
  guard: RequestHandler[];
  now: () => number;
  /** An id older than this is not resumed: the client gets `reset` (default one day). */
  replayWindowMs?: number;
}

/** A stream request's own input, checked before its caller is known. */
interface StreamInput {
  locale: string | undefined;
  /** The reconnect's cursor, when it sent an id. */
  resumed: StreamCursor | undefined;
  /** The stream the caller's client held before, when it named it. */
  replaces: string | undefined;
}

/** Paths relative to the /notifications mount. */
export const streamPaths = ['/v3/stream', '/v3/stream-ticket'];

/** The live tray (docs/live-tray.md): a server-sent event stream per caller, and its tickets. */
export function createStreamRouter(deps: StreamRouterDeps): Router {
  const router = Router();
  const replayWindowMs = deps.replayWindowMs ?? DAY_MS;

  router
    .route('/v3/stream-ticket')
    .post(...deps.guard, ...noInput(), async (_req, res) => {
      const expiresAt = callerExpiresAt(res);
      const ticket = await deps.tickets.issue({
        userId: callerId(res),
        ...(expiresAt === undefined ? {} : { expiresAt }),
      });
      res
        .status(201)
        .json({ data: { ticket, expiresIn: deps.tickets.ttlSeconds } } satisfies StreamTicketBody);
    })
    .all(methodNotAllowed(['POST']));

  // The input is checked before the caller is known: a ticket is redeemed (spent) on that step,
  // and a request refused for its own input must leave the ticket usable for the corrected one.
  const inputs = new WeakMap<Request, StreamInput>();
  const checkInput: RequestHandler = (req, _res, next) => {
    const query = parseInput(streamQuery, req.query, 'query');
    // An empty header (a proxy adding it to every request) names no id: the query's is taken.
    const header = req.get('last-event-id');
    const lastEventId = header === undefined || header === '' ? query.lastEventId : header;
    let resumed: StreamCursor | undefined;
    if (lastEventId !== undefined && lastEventId !== '') {
      resumed = decodeStreamCursor(lastEventId);
      if (!resumed) throw new AppError('VALIDATION', 'Last-Event-ID: not an id this stream sent');
    }
    inputs.set(req, { locale: query.locale, resumed, replaces: query.replaces });
    next();
  };

  // Before the ticket is redeemed, which leaves it to the retry. The streams still being authorised
  // (ticket, bans, rate limit and slot: Redis calls each) count as held: clients coming back at
  // once (a sibling instance shut down) all passed a check of the hub alone.
  let authorising = 0;
  /** Per request that passed refuseWhenFull: ends its count, once (the hub holds it, or it ended). */
  const authorised = new WeakMap<Request, () => void>();
  const refuseWhenFull: RequestHandler = (req, res, next) => {
    if (deps.hub.size + authorising < deps.streamsPerInstance) {
      authorising += 1;
      let counted = true;
      const done = () => {
        if (counted) authorising -= 1;
        counted = false;
      };
      authorised.set(req, done);
      // Refused on the way (a used ticket, a ban, the rate limit) or its client gone.
      res.once('close', done);
      next();
      return;
    }
    // Spread over 5-15 s, so refused clients do not all come back together.
    const retryAfter = 5 + Math.floor(Math.random() * 11);
    throw new AppError('UNAVAILABLE', 'this instance holds as many live streams as it may; try again later', {
      headers: { 'Retry-After': String(retryAfter) },
    });
  };

  // A HEAD would spend the ticket and take a slot (refuseHead). Its input is the query and
  // Last-Event-ID: a body, which an EventSource never sends, is refused, not ignored.
  router
    .route('/v3/stream')
    .get(
      refuseHead,
      ...noBody(),
      checkInput,
      refuseWhenFull,
      streamCaller(deps.verifyToken, deps.tickets),
      ...deps.afterCaller,
      async (req, res) => {
        const input = inputs.get(req);
        // checkInput runs first on this route: without its result the route is wired wrong.
        if (!input) throw new Error('stream input was not checked');
        inputs.delete(req);
        const userId = callerId(res);
        const at = deps.now();
        let cursor = freshCursor(at);
        let start: 'fresh' | 'resume' | 'reset' = 'fresh';
        if (input.resumed) {
          // Ahead of this clock: resumed, its catch-up would skip every change until then. Sent by
          // an instance whose clock runs ahead of this one's (or not this service's): a refusal
          // would end the client's stream for good, a `reset` reloads its list.
          if (input.resumed.at < at - replayWindowMs || isAheadOf(input.resumed, at)) start = 'reset';
          else [cursor, start] = [input.resumed, 'resume'];
        }
        const streamId = newStreamId(at);
        // At STREAMS_PER_USER the oldest of the user's streams gives its place: one whose client
        // vanished without closing it stays open on the server until TCP gives up (a quarter of an
        // hour), and must not lock the user out that long. A reconnect's own previous stream, when it
        // names it, gives its place first: the oldest may be another tab's healthy stream. Opening
        // counts as a call of the per-user rate limit (and a ticket as another), which bounds a client
        // opening streams in a loop. The hub ends the streams replaced once this one is open, or gives
        // them their places back when it is not (its client gone meanwhile, or shutdown begun).
        const replaced = await deps.slots.acquire(userId, streamId, input.replaces);
        const locale = deps.messages.negotiate(input.locale, req.get('accept-language'));
        res.vary('Accept-Language');
        const expiresAt = callerExpiresAt(res);
        deps.hub.open(
          res,
          { userId, streamId, locale, cursor, start, ...(expiresAt === undefined ? {} : { expiresAt }) },
          replaced,
        );
        // Counted by the hub from here.
        authorised.get(req)?.();
        // A stream stays open for hours, and Express leaves its router's continuation on the request
        // (req.next): closures and saved state of every layer passed, 1.6 kB a stream. Nothing calls
        // it once the stream has begun.
        (req as unknown as { next?: unknown }).next = undefined;
      },
    )
    .all(methodNotAllowed(['GET']));

  return router;
}
