import { redirectRefusal } from './redirect-refusal.ts';
import type { GetToken } from '../get-token.ts';
import { unauthorizedCodes } from '../generated/tray-api-types.ts';
import { TrayApiError } from '../tray-api-error.ts';
import { readTrayApiError } from './read-tray-api-error.ts';
import { retryDelay } from './retry-delay.ts';
import { untilAborted } from './until-aborted.ts';
import { wait } from './wait.ts';

/**
 * What a call with a window (`retryWithinMs`) keeps of it after a wait, to ask for a token and
 * send: a timer a busy page fires late, a token the app has at hand. A wait that would leave less
 * is not waited: the error is thrown at once instead.
 */
export const SEND_MARGIN_MS = 100;

/** Where and as whom a client calls, and how patiently. */
export interface TrayConnection {
  /** The tray service's URL, e.g. `https://tray.example.org` (a path prefix is kept). */
  baseUrl: string;
  /**
   * The caller's bearer token; asked before every call, again after each 429 or 503 waited out, and
   * once more after a 401.
   */
  getToken: GetToken;
  fetch: typeof fetch;
  /** How many times a call refused with 429 or 503 is sent again. */
  retries: number;
  /** A refusal that asks for a longer wait than this is thrown at once instead of waited out. */
  maxRetryWaitMs: number;
  /** How long one sending of a call may take, answer read in full, before it is abandoned (ms). */
  timeoutMs: number;
}

export interface TrayRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** From the service's root, e.g. `/notifications/v3`. */
  path: string;
  /** Query parameters; a list is sent as the parameter repeated, undefined values are left out. */
  query?: Readonly<Record<string, string | number | readonly string[] | undefined>>;
  /** Sent as JSON. */
  body?: unknown;
  signal?: AbortSignal | undefined;
  /**
   * For a call that takes every record of the user as the service finds them when it applies it
   * (ALL_RECORDS_RETRY_WITHIN_MS): sent again only while this many ms since the call began
   * allow the wait, whatever `maxRetryWaitMs` allows.
   */
  retryWithinMs?: number;
}

/**
 * Sends one call of the tray API and answers its JSON body, typed by the caller from the
 * service's schema (answers are not validated at run time; the types come from the same
 * declarations the service answers with). A refusal is thrown as a TrayApiError with the
 * service's code. 429 and 503 are sent again after the wait the service names (`Retry-After`),
 * at most `retries` times, each with a token asked for after the wait; a 401 asks `getToken` once
 * more, for a token that expired meanwhile, unless its code says the user is banned. A 401 is thrown
 * only for a token asked for right after a 401, with no wait between. Each sending that takes longer
 * than `timeoutMs` to answer in full is abandoned and the call rejects with a DOMException named
 * `TimeoutError`, not sent again: like a dropped connection, the service may have applied it.
 */
export async function sendRequest<T>(connection: TrayConnection, request: TrayRequest): Promise<T> {
  // Aborted already: no token asked for a call that is over.
  request.signal?.throwIfAborted();
  const url = requestUrl(connection.baseUrl, request);
  // Before the first token: retryWithinMs counts from when the app made the call (an `until`
  // measured then), not from when getToken answered.
  const began = performance.now();
  const timeLeft = () => (request.retryWithinMs ?? Infinity) - (performance.now() - began);
  const hadTime = timeLeft() >= 0;
  // Raced with the signal: an abort ends the call at once, also while the app finds a token.
  let token = await untilAborted(connection.getToken({}), request.signal);
  // A first token that came after the call's window (a sign-in, a call on every record, an
  // `until`) is not used: sent now, the call would take what arrived meanwhile, or come after its
  // `until`. A window over before the call (an `until` in the past) is the service's to refuse.
  if (hadTime && timeLeft() < 0)
    throw new DOMException(
      `getToken answered after the ${Math.round(request.retryWithinMs ?? 0)} ms this call may wait; it was not sent`,
      'TimeoutError',
    );
  /** Since the last wait: a token given before a wait may have expired during it. */
  let tokenAskedAgain = false;
  let retried = 0;
  for (;;) {
    const attempt = attemptSignal(connection.timeoutMs, request.signal);
    let result: Sent<T>;
    try {
      result = await sendOnce<T>(connection, url, request, token, attempt.signal);
    } finally {
      attempt.done();
    }
    if (result.ok) return result.value;
    const { error } = result;
    // A banned user's tokens are all refused: asking for another would only be refused again.
    if (error.status === 401 && error.code !== unauthorizedCodes.banned && !tokenAskedAgain) {
      tokenAskedAgain = true;
      token = await untilAborted(connection.getToken({ refused: token }), request.signal);
      // A sign-in that took longer than the call may wait (a call on every record, an `until`):
      // sent now, it would take what arrived meanwhile, or come after its `until`. One whose
      // window was over before it was sent goes for the service's answer, as it did first.
      if (hadTime && timeLeft() < 0) throw error;
      continue;
    }
    if ((error.status === 429 || error.status === 503) && retried < connection.retries) {
      // A call with a window must be sent within it, not only waited within it: a wait cut to end
      // at the window's last millisecond left no time to send, so the call waited only to throw.
      const sendBy = timeLeft() - SEND_MARGIN_MS;
      const delay = retryDelay(
        retried,
        error.retryAfterMs,
        Math.random,
        Math.min(connection.maxRetryWaitMs, sendBy),
      );
      if (delay !== undefined) {
        retried += 1;
        await wait(delay, request.signal);
        // Waits add up to minutes (three of up to maxRetryWaitMs): longer than some tokens live.
        token = await untilAborted(connection.getToken({}), request.signal);
        if (timeLeft() < 0) throw error;
        tokenAskedAgain = false;
        continue;
      }
    }
    throw error;
  }
}

type Sent<T> =
  | { ok: true; value: T }
  // The refusal, with the wait it named (TrayApiError.retryAfterMs, read against its own Date).
  | { ok: false; error: TrayApiError };

/** One sending of a call, its answer read in full (what the attempt's timeout covers). */
async function sendOnce<T>(
  connection: TrayConnection,
  url: string,
  request: TrayRequest,
  token: string,
  signal: AbortSignal,
): Promise<Sent<T>> {
  const response = await connection.fetch(url, {
    method: request.method,
    headers: {
      Accept: 'application/json',
      Authorization: `Bearer ${token}`,
      ...(request.body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
    signal,
    redirect: 'manual',
  });
  const moved = redirectRefusal(response);
  if (moved) {
    await response.body?.cancel();
    return { ok: false, error: moved };
  }
  if (response.ok) {
    const value = await readJson<T>(response);
    return { ok: true, value };
  }
  const error = await readTrayApiError(response);
  // An abort or a timeout while the refusal's body was read ends that read, which
  // readTrayApiError takes for a body it could not use: the call rejects with the signal's
  // reason, as every abort does.
  signal.throwIfAborted();
  return { ok: false, error };
}

/**
 * The signal of one sending: the caller's, and a timer of its own cleared when the sending ends
 * (AbortSignal.timeout's would outlive every call by `timeoutMs`, thousands of them in a busy back
 * end).
 */
function attemptSignal(timeoutMs: number, caller: AbortSignal | undefined) {
  const controller = new AbortController();
  const timer = setTimeout(
    () =>
      controller.abort(
        new DOMException(`the tray service did not answer within ${timeoutMs} ms`, 'TimeoutError'),
      ),
    timeoutMs,
  );
  return {
    signal: caller ? AbortSignal.any([caller, controller.signal]) : controller.signal,
    done: () => clearTimeout(timer),
  };
}

function requestUrl(baseUrl: string, request: TrayRequest): string {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}${request.path}`);
  for (const [name, value] of Object.entries(request.query ?? {})) {
    if (value === undefined) continue;
    for (const one of typeof value === 'object' ? value : [value]) {
      const text = String(one);
      // A URL carries UTF-8, which has no lone surrogate: the parameter would arrive as U+FFFD, and
      // the service (which refuses such a text in a JSON body) would answer for another value.
      if (!text.isWellFormed()) throw new TypeError(`${name}: a value holds a lone surrogate`);
      url.searchParams.append(name, text);
    }
  }
  return url.href;
}

async function readJson<T>(response: Response): Promise<T> {
  const type = response.headers.get('Content-Type') ?? '';
  if (!/^application\/json\b/i.test(type)) {
    await response.body?.cancel();
    throw new TrayApiError(response.status, 0, `expected a JSON answer, got ${type || 'no content type'}`);
  }
  // Read first, parsed after: a connection dropped while reading stays the fetch's own error, and
  // a body that is not JSON (cut, or a proxy's) is a TrayApiError like any other unusable answer.
  const text = await response.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new TrayApiError(response.status, 0, `the answer is not valid JSON (${text.length} characters)`);
  }
}
