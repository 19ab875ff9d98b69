import type { GetToken } from '../get-token.ts';
import { untilAborted } from '../request/until-aborted.ts';
import { wait } from '../request/wait.ts';
import { openConnection } from './open-connection.ts';
import { readSse } from './read-sse.ts';
import { reconnectWait, type ReconnectPolicy } from './reconnect-delay.ts';
import { createSseParser, MAX_EVENT_CHARS } from './sse-parser.ts';
import { streamSettings, type StreamSettings } from './stream-settings.ts';
import { TrayStreamError } from './tray-stream-error.ts';
import { isTrayStreamEventName, type TrayStreamEvent } from './tray-stream-event.ts';

/**
 * connecting: buying a ticket and opening; open: events flow; waiting: before a reconnect; closed:
 * the iteration has ended (after `replaced`, a refusal for good, an abort or a loop left), the last
 * state reported.
 */
export type TrayStreamState = 'connecting' | 'open' | 'waiting' | 'closed';

export interface TrayStreamOptions {
  /**
   * The tray service's address, e.g. `https://tray.example.com`; in a browser also relative to the
   * page ('' for its own origin). A TypeError at the call when it is no URL.
   */
  baseUrl: string;
  /**
   * A current bearer token for the user; asked again after every wait to reconnect (the token may
   * have expired meanwhile), and after `expired` or a 401 (not a ban's) with the token refused
   * (`{ refused }`): return a new one then. Its errors end the iteration, except one after a wait
   * (its endpoint may be down in the outage the stream waited out): that one is waited out too,
   * and told to `onError`.
   */
  getToken: GetToken;
  /** Defaults to the global fetch (Node 24, browsers). */
  fetch?: typeof fetch;
  /** Aborting it ends the iteration cleanly, wherever it is (reading, waiting, connecting). */
  signal: AbortSignal;
  /** Resume after this event id (an id this stream yielded earlier, kept by the app). */
  lastEventId?: string;
  /**
   * Told the id to resume from each time it moves: after each event yielded, and when the service
   * moves a quiet stream's id with a heartbeat, which yields nothing. An app that keeps the id to
   * resume a later stream (`lastEventId`) keeps this one: the last event's id grows old on a quiet
   * stream, and one older than a day is answered `reset`.
   */
  onResumePoint?: (id: string) => void;
  /** The locale of `record` descriptions (the service negotiates it like history's). */
  locale?: string;
  /**
   * Waits between reconnects (default 1 s doubling to 30 s, jittered). A wait the service names
   * (`Retry-After`, `retry:`) is waited out, but never less than this backoff's step nor more than `maxMs`.
   * Each must be a finite number above 0 (a TypeError at the call otherwise).
   */
  reconnect?: Partial<ReconnectPolicy>;
  /**
   * A stream silent this long is taken for dead and reopened (default 45 s: three heartbeats); a
   * request of a connection attempt (its ticket, the stream's headers) without an answer this long
   * is given up and tried again. A finite number above 0 and at most 2^31 - 1 (a TypeError at the
   * call otherwise).
   */
  idleTimeoutMs?: number;
  /**
   * Told of each change of the connection (a UI's "reconnecting…"); last `closed`, when the
   * iteration ends.
   */
  onState?: (state: TrayStreamState) => void;
  /**
   * Told of each failure the stream waits out rather than ends on, before the wait (`retryInMs`):
   * a connection that could not open (no answer, 429, 5xx: a TrayApiError or the fetch's error),
   * a `getToken` that failed after a wait, the token just refused given back, and a stream that
   * opened but came to nothing (a TrayStreamError: it ended at once or right after its opening
   * `unread`, on a damaged or oversized event, or silent for `idleTimeoutMs`); not a stream that
   * was served and then ended (a service restarting), which is no failure. An app that sees
   * the same error over and over (its sign-in has ended) aborts `signal`; the stream itself goes
   * on trying, as an outage of any length may end.
   */
  onError?: (error: unknown, retryInMs: number) => void;
}

/**
 * A user's live tray as an async iterator of typed events (docs/client.md, "Live"). It reconnects
 * by itself, resuming after the last event it yielded, so the events it yields across drops,
 * restarts and token expiries miss nothing the service stored. It ends when `signal` aborts or the
 * loop breaks, and throws a TrayApiError when the service refuses for good: a ban (401 with code
 * 401001, at once), a 401 for a new token `getToken` gave right after a 401, with no wait between,
 * the token refused given back MAX_SAME_TOKEN_WAITS times, or a 400, 403, 404 or 410. It also
 * ends, without an error, after yielding `replaced`: a newer stream of the user took its place.
 */
export function openTrayStream(options: TrayStreamOptions): AsyncGenerator<TrayStreamEvent, void, undefined> {
  // Checked here, not in the generator, whose body runs only at the first next(): a mistake is
  // thrown where the stream is opened. So is a runtime without AbortSignal.any (Safari before
  // 17.4), which would otherwise fail at the first next() without telling onState.
  if (typeof AbortSignal.any !== 'function') {
    throw new TypeError(
      'openTrayStream: this runtime has no AbortSignal.any (docs/client.md lists the browsers)',
    );
  }
  return streamEvents(options, streamSettings(options));
}

/**
 * How many times the stream waits for a token other than the one refused, when getToken keeps
 * giving that one back, before it ends with the 401 (about 15 s at the default backoff).
 */
const MAX_SAME_TOKEN_WAITS = 4;

async function* streamEvents(
  options: TrayStreamOptions,
  { base, policy, idleTimeoutMs }: StreamSettings,
): AsyncGenerator<TrayStreamEvent, void, undefined> {
  const request = options.fetch ?? fetch;
  const state = options.onState ?? (() => undefined);
  // Ends any request or read still open when the loop stops for another reason than `signal`.
  const stop = new AbortController();
  const signal = AbortSignal.any([options.signal, stop.signal]);
  let lastEventId = options.lastEventId;
  /** The last id onResumePoint was told. */
  let toldResumePoint = options.lastEventId;
  const tellResumePoint = () => {
    if (lastEventId === undefined || lastEventId === toldResumePoint) return;
    toldResumePoint = lastEventId;
    options.onResumePoint?.(lastEventId);
  };
  /**
   * The id the service gave the last stream that opened (its `opened` event). A reconnect names it:
   * after a silent drop the service may still hold that stream, which then gives its place to the
   * new one, rather than the user's oldest (another tab's, healthy) at STREAMS_PER_USER.
   */
  let previousStreamId: string | undefined;
  let token: string | undefined;
  /** The token of the last 401, until a stream opens: what getToken is told was refused. */
  let refused: string | undefined;
  /** Waits since getToken last gave back the very token refused. */
  let sameTokenWaits = 0;
  /**
   * 401s in a row with no wait between them. A token is asked for after each, so a second means a
   * token getToken has just given was refused too: the user is refused for good. A wait starts the
   * count again: a token given before it may have expired meanwhile (an outage longer than a token
   * lives), and its 401 says nothing of the next.
   */
  let refusals = 0;
  /**
   * A wait came since a stream was last open: getToken may fail for the reason the stream waited
   * (the network is down, and the app's own token endpoint with it), which would end the stream in
   * the very outage it was to outlast. Such a failure is waited out as a connection's is, also for
   * a token asked for after a 401 then (a cached token that expired during the wait, refused,
   * while the endpoint is not back yet); only the first token's failure, or one asked for after a
   * 401 of a stream not waited for, ends the iteration.
   */
  let askingAfterWait = false;
  /**
   * After every wait: the token held may have expired while the stream waited. Asked for afresh,
   * not as a refused one: a token refused before the wait was replaced already, and a provider
   * told `refused` again would mint a new token after every wait of an outage.
   */
  const afterWait = () => {
    token = undefined;
    refused = undefined;
    refusals = 0;
    askingAfterWait = true;
  };
  /** Connection attempts since a stream was last served and did not end on a damaged event, for the backoff. */
  let attempt = 0;
  /**
   * The service's last `retry:`, kept for every later wait until a stream is served again and
   * ends without one: it spreads its clients at shutdown with it, and a reconnect that met it
   * still down would otherwise fall back to the short backoff, bringing them back together. Kept
   * for good (as an EventSource keeps its reconnection time), one rolling deploy would slow every
   * later reconnect by that much.
   */
  let serviceRetryMs: number | undefined;
  /**
   * Waits as the backoff says before the next attempt, telling onError of the failure waited out
   * first, if any (an onError that throws ends the iteration). Boxed: a getToken may reject with
   * undefined.
   */
  const waitOut = async (retryAfterMs: number | undefined, failure?: { error: unknown }) => {
    state('waiting');
    const ms = reconnectWait(attempt, policy, retryAfterMs);
    if (failure) options.onError?.(failure.error, ms);
    await pause(ms, signal);
    attempt += 1;
  };
  try {
    while (!signal.aborted) {
      state('connecting');
      if (token === undefined) {
        try {
          // Raced with the signal: an abort ends the iteration at once, also while the app finds a
          // token; and a getToken that fails because of the abort (the app passed the signal on)
          // ends it as cleanly as any abort.
          token = await untilAborted(options.getToken(refused === undefined ? {} : { refused }), signal);
        } catch (error) {
          if (signal.aborted) return;
          if (!askingAfterWait) throw error;
          await waitOut(undefined, { error });
          continue;
        }
      }
      const connection = await openConnection({
        base,
        token,
        lastEventId,
        replaces: previousStreamId,
        locale: options.locale,
        fetch: request,
        signal,
        timeoutMs: idleTimeoutMs,
      });
      if (signal.aborted) return;
      if (connection.kind === 'fatal') throw connection.error;
      if (connection.kind === 'refused') {
        refusals += 1;
        if (refusals > 1 && token === refused && sameTokenWaits < MAX_SAME_TOKEN_WAITS) {
          // The very token refused, given back (a cache whose clock has not reached what the
          // service refuses it for): waited for, as an outage is, before asking again.
          await waitOut(undefined, { error: connection.error });
          sameTokenWaits += 1;
          // Asked after a wait, as refused still: a failure of it (the token endpoint down) is
          // waited out too.
          askingAfterWait = true;
        } else if (refusals > 1) throw connection.error;
        refused = token;
        token = undefined;
        continue;
      }
      if (connection.kind === 'unavailable') {
        await waitOut(connection.retryAfterMs ?? serviceRetryMs, { error: connection.error });
        afterWait();
        continue;
      }
      state('open');
      askingAfterWait = false;
      refusals = 0;
      refused = undefined;
      sameTokenWaits = 0;
      const parser = createSseParser();
      const openedAt = performance.now();
      /** Why it ended on a damaged event (not JSON, too large): the reconnect asks for it again. */
      let damaged: TrayStreamError | undefined;
      /** readSse gave the body up as silent for idleTimeoutMs. */
      let idle = false;
      /** The stream's opening `unread` (after `reset`, if any) has come; events after it count. */
      let started = false;
      /** Served past its opening: an event after the first `unread`. */
      let served = false;
      /** The token this stream ended on `expired` with. */
      let expiredToken: string | undefined;
      // Once a chunk's events are all yielded: the id of a block without data (a heartbeat's) is
      // then past everything the app has; not after an oversized event, taken for a damaged one.
      const afterChunk = () => {
        if (parser.overflowed || parser.lastEventId === '') return;
        lastEventId = parser.lastEventId;
        tellResumePoint();
      };
      const onIdle = () => void (idle = true);
      for await (const message of readSse(connection.body, parser, idleTimeoutMs, afterChunk, onIdle)) {
        // One chunk may hold many events, all parsed before the first is yielded: an abort while the
        // app handles one must end the iteration before the next, as the read itself would.
        if (signal.aborted) return;
        if (message.event === 'opened') {
          // Not the app's: damaged, it is only not named on the reconnect (the oldest gives its place).
          previousStreamId = streamIdOf(parseJson(message.data));
          if (message.id !== '') lastEventId = message.id;
          continue;
        }
        const known = isTrayStreamEventName(message.event);
        const data = known ? parseJson(message.data) : undefined;
        // The service writes JSON: data that is not was damaged on the way (a proxy, a cut). Taken
        // for a dropped connection, so the reconnect asks for this event again rather than the app
        // losing it or the iteration ending on a SyntaxError.
        if (known && data === undefined) {
          const at = message.id === '' ? '' : ` (id ${message.id})`;
          damaged = new TrayStreamError(
            'damaged-event',
            `a "${message.event}" event${at} arrived damaged: its data is not JSON; asking for it again`,
          );
          break;
        }
        // Every stream opens with `unread` (after `reset`, if any), written before the service reads
        // what the stream missed: a service that fails that read ends each stream right after it.
        if (started || (message.event !== 'unread' && message.event !== 'reset')) served = true;
        if (message.event === 'unread') started = true;
        if (message.event === 'expired') expiredToken = token;
        if (message.id !== '') lastEventId = message.id;
        // An event without an id of its own (the service leaves them off until a `reset`) carries
        // the resume point still: a `replaced` resumed from its id must not start afresh.
        const id = message.id !== '' ? message.id : (lastEventId ?? '');
        if (known) yield { event: message.event, id, data } as TrayStreamEvent;
        // Told once the app has taken the event (asked for the next), not before.
        tellResumePoint();
        // A newer stream of the user took this one's place (STREAMS_PER_USER): reconnecting would
        // take the place back from it, and it would come back in turn (two tabs at a limit of one).
        // The iteration ends; the app offers to resume, after this event's id.
        if (message.event === 'replaced') return;
      }
      if (signal.aborted) return;
      // An event too large to be the service's (sse-parser.ts) is damaged, as garbled data is.
      if (parser.overflowed)
        damaged ??= new TrayStreamError(
          'oversized-event',
          `an event or a line grew past ${MAX_EVENT_CHARS} characters without its end; dropped`,
        );
      const garbled = damaged !== undefined;
      // The id of a block without data, which yields no message; not after a garbled event, which
      // the parser has dispatched (and maybe more after it) but the app never saw.
      if (!garbled && parser.lastEventId !== '') lastEventId = parser.lastEventId;
      tellResumePoint();
      // Only a stream that was served starts the backoff again: past its opening `unread`, or open
      // for as long as the longest wait. One that ends at once, however often, is waited for longer
      // each time, also after its `unread` (else a service failing every catch-up would have all
      // its clients back every second or two while the failure lasts). So is one that ended on a
      // damaged event: the events before it would otherwise bring it back at once, for ever, if the
      // same event is damaged each time.
      const steady = served || performance.now() - openedAt >= policy.maxMs;
      if (steady && !garbled) attempt = 0;
      // The service's own `retry:` (sent when it shuts down, spread over clients) wins over a shorter
      // backoff, up to maxMs.
      if (parser.retryMs !== undefined) serviceRetryMs = parser.retryMs;
      // Served since, and ended without one: the outage it was sent for is over.
      else if (steady && !garbled) serviceRetryMs = undefined;
      const failure = damaged ?? endFailure({ idle, idleTimeoutMs, steady, started });
      await waitOut(serviceRetryMs, failure && { error: failure });
      afterWait();
      // After `expired` the token has reached its `exp` by the service's clock: asked for as
      // refused, so a cache whose clock is behind does not give it back (its ticket would be
      // refused with 401 first, a round trip and a wait for nothing).
      if (expiredToken !== undefined) refused = expiredToken;
    }
  } finally {
    stop.abort();
    // However it ended: a UI driven by the states would otherwise go on showing the stream live
    // (after `replaced`) or reconnecting (after a refusal while waiting).
    state('closed');
  }
}

/**
 * What onError is told of a stream that opened and ended on no damaged event: a failure, as a
 * connection's is, when it went silent or was not steady (docs/client.md, "Reconnects"); nothing
 * for a steady one that ended (a service restarting after serving it a while, a token's `expired`).
 */
function endFailure(end: {
  idle: boolean;
  idleTimeoutMs: number;
  steady: boolean;
  started: boolean;
}): TrayStreamError | undefined {
  if (end.idle)
    return new TrayStreamError(
      'idle-timeout',
      `nothing came for ${end.idleTimeoutMs} ms (idleTimeoutMs): the connection was taken for dead`,
    );
  if (end.steady) return undefined;
  return new TrayStreamError(
    'ended-early',
    end.started
      ? 'the stream ended right after its opening `unread`, having served nothing'
      : 'the stream ended at once, before its opening `unread`',
  );
}

/** The `streamId` of an `opened` event's data, or undefined when it holds none. */
function streamIdOf(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null || !('streamId' in data)) return undefined;
  return typeof data.streamId === 'string' ? data.streamId : undefined;
}

/** The value `text` holds as JSON, or undefined (which JSON cannot hold) when it holds none. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Waits, or stops waiting when `signal` aborts; the loop then sees the signal and ends. */
const pause = (ms: number, signal: AbortSignal) => wait(ms, signal).catch(() => undefined);
