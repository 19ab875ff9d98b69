import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';

/** One server-sent event as a browser's EventSource would see it, or a comment line. */
export interface SseEvent {
  event: string;
  id: string | undefined;
  data: string;
  retry?: number;
  comment?: string;
}

export interface SseStream {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  /** Everything received so far, in order (comments included, event 'comment'). */
  readonly events: SseEvent[];
  /** The body of a refused stream (a JSON error), once it has ended. */
  body(): Promise<string>;
  /** The next event (after `from`, an index into events) that satisfies `match`; rejects after `timeoutMs`. */
  next(
    match: (event: SseEvent) => boolean,
    options?: { from?: number; timeoutMs?: number },
  ): Promise<SseEvent>;
  /** Resolves when the server ends the stream. */
  readonly ended: Promise<void>;
  close(): void;
}

/**
 * A minimal EventSource over node:http, so tests read the exact bytes the server sends (ids,
 * comments, retry hints) and can hold many streams without a browser.
 */
export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const req: ClientRequest = httpRequest(url, { headers: { Accept: 'text/event-stream', ...headers } });
    req.on('error', reject);
    req.on('response', (res) => {
      const events: SseEvent[] = [];
      const waiters = new Set<() => void>();
      let buffer = '';
      let raw = '';
      let endedResolve: () => void = () => undefined;
      const ended = new Promise<void>((done) => (endedResolve = done));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        raw += chunk;
        buffer += chunk;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const event: SseEvent = { event: 'message', id: undefined, data: '' };
          for (const line of block.split('\n')) {
            if (line.startsWith(':'))
              Object.assign(event, { event: 'comment', comment: line.slice(1).trim() });
            const [field, ...rest] = line.split(':');
            const value = rest.join(':').replace(/^ /, '');
            if (field === 'event') event.event = value;
            if (field === 'id') event.id = value;
            if (field === 'data') event.data = value;
            if (field === 'retry') Object.assign(event, { event: 'retry', retry: Number(value) });
          }
          events.push(event);
        }
        for (const wake of waiters) wake();
      });
      let isEnded = false;
      const finish = () => {
        isEnded = true;
        endedResolve();
        for (const wake of waiters) wake();
      };
      res.on('end', finish);
      res.on('close', finish);
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        events,
        body: async () => (await ended, raw),
        ended,
        next(match, options = {}) {
          const from = options.from ?? 0;
          const timeoutMs = options.timeoutMs ?? 5_000;
          return new Promise((found, fail) => {
            const check = () => {
              const hit = events.slice(from).find(match);
              if (hit) {
                cleanup();
                found(hit);
              } else if (isEnded) {
                cleanup();
                fail(new Error(`stream ended without the event; got ${JSON.stringify(events)}`));
              }
            };
            const timer = setTimeout(() => {
              cleanup();
              fail(new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(events)}`));
            }, timeoutMs);
            const cleanup = () => {
              clearTimeout(timer);
              waiters.delete(check);
            };
            waiters.add(check);
            check();
          });
        },
        close: () => req.destroy(),
      });
    });
    req.end();
  });
}

export const named = (name: string) => (event: SseEvent) => event.event === name;

/** The id of the last event that carried one: where a reconnect resumes ('' before any). */
export const lastId = (events: readonly SseEvent[]) =>
  events.filter((event) => event.id !== undefined).at(-1)?.id ?? '';

export function dataOf<T>(event: SseEvent): T {
  return JSON.parse(event.data) as T;
}
