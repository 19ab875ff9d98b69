import { redirectRefusal } from '../request/redirect-refusal.ts';
import { unauthorizedCodes, type StreamTicketBody } from '../generated/tray-api-types.ts';
import { TrayApiError } from '../tray-api-error.ts';
import { readTrayApiError } from '../request/read-tray-api-error.ts';
import { responseClock, retryAfterMs } from '../request/retry-delay.ts';

export interface ConnectionRequest {
  /** The service's base URL without a trailing slash. */
  base: string;
  token: string;
  lastEventId: string | undefined;
  /** The id of the stream this one follows (its `opened` event's), which the service ends first. */
  replaces: string | undefined;
  locale: string | undefined;
  fetch: typeof fetch;
  signal: AbortSignal;
  /** How long each request may wait for its answer (a ticket's whole, a stream's headers). */
  timeoutMs: number;
}

/**
 * open: the stream answered 200 with an event stream. refused: 401 to the ticket's purchase, the
 * token was not accepted. unavailable: worth trying again (no answer, 429, 5xx, any other answer
 * not named below, a 200 that is not an event stream), after `retryAfterMs` when the service said
 * so. fatal: a refusal that trying again cannot change (a banned user's 401, 400 for an id this
 * service never sent, 403, 404, 410, and the others of FINAL_STATUSES).
 */
export type Connection =
  | { kind: 'open'; body: ReadableStream<Uint8Array> }
  | { kind: 'refused'; error: TrayApiError }
  | { kind: 'unavailable'; error: unknown; retryAfterMs: number | undefined }
  | { kind: 'fatal'; error: TrayApiError };

/**
 * One connection attempt: a single-use ticket bought with the bearer token, then the stream
 * opened with it (docs/live-tray.md, "Tickets"). The last id goes in the query rather than the
 * Last-Event-ID header, which the service reads alike: a GET with no custom header needs no CORS
 * preflight from a browser on another origin.
 */
export async function openConnection(request: ConnectionRequest): Promise<Connection> {
  // Called unbound: a browser's fetch throws "Illegal invocation" when called as a method of
  // another object.
  const { base, fetch: send } = request;
  // Each request waits `timeoutMs` at most: one that never gets an answer (a server or a proxy
  // that hangs) would otherwise hold the stream `connecting` until the platform gives up, if it
  // does (Node: 300 s). Cleared on return, so the body of a stream that opened is never cut.
  const deadline = new AbortController();
  const signal = AbortSignal.any([request.signal, deadline.signal]);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    clearTimeout(timer);
    const reason = new DOMException(`no answer within ${request.timeoutMs} ms`, 'TimeoutError');
    timer = setTimeout(() => deadline.abort(reason), request.timeoutMs);
  };
  try {
    arm();
    const issued = await send(`${base}/notifications/v3/stream-ticket`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${request.token}`, Accept: 'application/json' },
      signal,
      redirect: 'manual',
    });
    if (!issued.ok) return await failed(issued, 'token');
    const { data } = (await issued.json()) as StreamTicketBody;
    const query = new URLSearchParams({ ticket: data.ticket });
    if (request.locale !== undefined) query.set('locale', request.locale);
    if (request.lastEventId !== undefined && request.lastEventId !== '')
      query.set('lastEventId', request.lastEventId);
    if (request.replaces !== undefined) query.set('replaces', request.replaces);
    arm();
    const response = await send(`${base}/notifications/v3/stream?${query.toString()}`, {
      headers: { Accept: 'text/event-stream' },
      signal,
      redirect: 'manual',
    });
    if (!response.ok) return await failed(response, 'ticket');
    if (response.body === null) throw new Error('the stream answered without a body');
    // A proxy's or a maintenance page answers 200 too: taken for a stream it would end at once, and
    // the client would come back every second instead of backing off.
    const type = response.headers.get('Content-Type') ?? '';
    if (!/^text\/event-stream\s*(;|$)/i.test(type)) {
      await response.body.cancel();
      const error = new TrayApiError(200, 0, `expected an event stream, got ${type || 'no content type'}`);
      return { kind: 'unavailable', error, retryAfterMs: undefined };
    }
    return { kind: 'open', body: response.body };
  } catch (error) {
    return { kind: 'unavailable', error, retryAfterMs: undefined };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What a refused request says. The ticket's purchase is the one judge of the token; the stream
 * request's 401 refuses its ticket (unknown, used or past its 30 s: a replayed or slow request),
 * which a new ticket bought with the same token may pass: tried again after a wait, as an outage
 * is. If the token expired meanwhile, the next purchase says so.
 */
async function failed(response: Response, presented: 'token' | 'ticket'): Promise<Connection> {
  const moved = redirectRefusal(response);
  if (moved) {
    await response.body?.cancel();
    return { kind: 'fatal', error: moved };
  }
  const error = await readTrayApiError(response);
  // A ban is for good: a new token would be refused too (docs/client.md#live).
  if (response.status === 401 && error.code === unauthorizedCodes.banned) return { kind: 'fatal', error };
  if (response.status === 401 && presented === 'token') return { kind: 'refused', error };
  if (FINAL_STATUSES.has(response.status)) return { kind: 'fatal', error };
  // Anything else may pass on its own: a proxy's 408, a 409 or 425, a 429, a 5xx.
  return {
    kind: 'unavailable',
    error,
    retryAfterMs: retryAfterMs(
      response.headers.get('retry-after'),
      responseClock(response.headers, Date.now()),
    ),
  };
}

/**
 * Refusals that stay whatever the wait: a request the service will not take (400, e.g. an id it
 * never sent), one the user may not make (403), a path it does not serve (404, 410: a wrong
 * baseUrl), and what a server or a proxy in front of it says of the request's very form: a method
 * it does not take there (405, 501), a body, URL or headers it will not read (411, 413, 414, 415,
 * 422, 431), a version it does not speak (505). Tried again, each came back the same with every
 * backoff step, for as long as the page stayed open.
 */
const FINAL_STATUSES = new Set([400, 403, 404, 405, 410, 411, 413, 414, 415, 422, 431, 501, 505]);
