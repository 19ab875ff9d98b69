import { blockMethods, type BlockMethods } from './block/block-methods.ts';
import type { GetToken } from './get-token.ts';
import { inboxMethods, type InboxMethods } from './inbox/inbox-methods.ts';
import { sendRequest, type TrayConnection, type TrayRequest } from './request/send-request.ts';
import { openTrayStream, type TrayStreamOptions } from './stream/open-tray-stream.ts';
import type { TrayStreamEvent } from './stream/tray-stream-event.ts';
import { trayMethods, type TrayMethods } from './tray/tray-methods.ts';
import { absoluteBase } from './base-url.ts';

export interface TrayClientOptions {
  /**
   * The tray service's URL, e.g. `https://tray.example.org` (a path prefix is kept). In a browser
   * it may be relative to the page: '' is the page's own origin.
   */
  baseUrl: string;
  /**
   * The user's bearer token (a JWT the service accepts). Asked before every call and after every
   * wait (a 429 or 503 waited out, a stream's reconnect), so return a cached token while it is
   * valid; asked once more after a 401 with the token refused (`{ refused }`): return a new one
   * then, even if the cached one has not reached its `exp`. Calls refused together each ask: one
   * refresh shared among them (or the current token, when it already differs from `refused`).
   */
  getToken: GetToken;
  /** Another fetch (a proxy's, a test's); the global one by default. */
  fetch?: typeof fetch;
  /** The locale records' descriptions are written in (`?locale=`); the service's default otherwise. */
  locale?: string;
  /** How many times a call refused with 429 or 503 is sent again (default 3; a whole number, 0 for never). */
  retries?: number;
  /**
   * A refusal asking for a longer wait than this (ms, default 30 s; 0 or more) is thrown at once;
   * below 250 ms (the first backoff) every 429 and 503 is.
   */
  maxRetryWaitMs?: number;
  /**
   * How long one sending of a call may take to be answered in full (ms, default 30 s, above 0 and at
   * most a day); past it the call rejects with a DOMException named `TimeoutError`. Not the
   * stream's (`idleTimeoutMs`).
   */
  timeoutMs?: number;
}

/** What `stream()` takes beyond the client's own options. */
export type TrayClientStreamOptions = Omit<TrayStreamOptions, 'baseUrl' | 'getToken' | 'fetch'>;

/** One user's tray: every call of the tray API, typed from the service's schema. */
export type TrayClient = TrayMethods &
  InboxMethods &
  BlockMethods & {
    /** The user's tray live (docs/client.md#live): openTrayStream with the client's connection. */
    stream(options: TrayClientStreamOptions): AsyncGenerator<TrayStreamEvent, void, undefined>;
  };

/** How long one sending waits for an answer unless `timeoutMs` says otherwise. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** The longest wait a client may be set to accept before a retry, or for an answer: a day. */
const MAX_RETRY_WAIT_MS = 86_400_000;

/**
 * A client of the tray API for one user (the one `getToken`'s tokens name). No state but its
 * options: create one per user, or per request in a back end.
 */
export function createTrayClient(options: TrayClientOptions): TrayClient {
  // The stream needs it (the caller's signal with its own); an older browser would otherwise fail
  // only at the stream's first event, long after every other call worked.
  if (typeof AbortSignal.any !== 'function') {
    throw new TypeError(
      'createTrayClient: this runtime has no AbortSignal.any (docs/client.md lists the browsers)',
    );
  }
  // Resolved once, as the stream resolves its own: '' is a page's origin in a browser.
  const baseUrl = absoluteBase(options.baseUrl, 'createTrayClient');
  // NaN (a Number() of a variable left unset) would send every retry at once, ignoring Retry-After.
  const retries = options.retries ?? 3;
  if (!Number.isSafeInteger(retries) || retries < 0)
    throw new TypeError(`createTrayClient: retries must be a whole number from 0, got ${String(retries)}`);
  const maxRetryWaitMs = options.maxRetryWaitMs ?? 30_000;
  // At most a day: Infinity would wait out any Retry-After, a 400-digit one's too, for ever.
  if (
    typeof maxRetryWaitMs !== 'number' ||
    Number.isNaN(maxRetryWaitMs) ||
    maxRetryWaitMs < 0 ||
    maxRetryWaitMs > MAX_RETRY_WAIT_MS
  )
    throw new TypeError(
      `createTrayClient: maxRetryWaitMs must be a number from 0 to ${MAX_RETRY_WAIT_MS}, got ${String(maxRetryWaitMs)}`,
    );
  // Without one a service that accepts the connection and never answers holds the call, and the
  // back end's request behind it, for ever.
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (typeof timeoutMs !== 'number' || !(timeoutMs > 0) || timeoutMs > MAX_RETRY_WAIT_MS)
    throw new TypeError(
      `createTrayClient: timeoutMs must be a number above 0 and at most ${MAX_RETRY_WAIT_MS}, got ${String(timeoutMs)}`,
    );
  const given = options.fetch;
  const connection: TrayConnection = {
    baseUrl,
    getToken: options.getToken,
    // Always called unbound: a browser's fetch (the global one, or `window.fetch` passed in) throws
    // "Illegal invocation" when called as a method of another object, as `connection.fetch(…)` is.
    fetch: given ? (input, init) => given(input, init) : (input, init) => globalThis.fetch(input, init),
    retries,
    maxRetryWaitMs,
    timeoutMs,
  };
  const send = <T>(request: TrayRequest) => sendRequest<T>(connection, request);
  return {
    ...trayMethods(send, { locale: options.locale }),
    ...inboxMethods(send),
    ...blockMethods(send),
    stream: (streamOptions) =>
      openTrayStream({
        baseUrl,
        getToken: options.getToken,
        fetch: connection.fetch,
        ...streamOptions,
        // A stream's own locale wins; one given as undefined leaves the client's, as a call's does.
        ...(options.locale === undefined ? {} : { locale: streamOptions.locale ?? options.locale }),
      }),
  };
}
