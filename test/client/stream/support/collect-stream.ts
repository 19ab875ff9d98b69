import type { TrayStreamEvent, TrayStreamEventName } from '../../../../client/src/stream/index.ts';

type EventOf<E extends TrayStreamEventName> = Extract<TrayStreamEvent, { event: E }>;

export interface CollectedStream {
  /** Every event the iterator yielded, in order. */
  readonly events: TrayStreamEvent[];
  /** The first `event` (at or after index `from`) that satisfies `match`; rejects after `timeoutMs`. */
  next<E extends TrayStreamEventName>(
    event: E,
    options?: { match?: (found: EventOf<E>) => boolean; from?: number; timeoutMs?: number },
  ): Promise<EventOf<E>>;
  /** Settles when the iteration ends: with the error it threw, or undefined when it ended cleanly. */
  readonly ended: Promise<unknown>;
  /** The data of every `record` event, in order. */
  records(): EventOf<'record'>['data'][];
}

/** Iterates a stream in the background, as an app would, keeping what it yields for assertions. */
export function collectStream(iterable: AsyncIterable<TrayStreamEvent>): CollectedStream {
  const events: TrayStreamEvent[] = [];
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of waiters) waiter();
  };
  const ended = (async () => {
    try {
      for await (const event of iterable) {
        events.push(event);
        wake();
      }
      return undefined;
    } catch (error) {
      return error;
    } finally {
      wake();
    }
  })();
  let isEnded = false;
  void ended.then(() => (isEnded = true));

  return {
    events,
    ended,
    records: () => events.flatMap((event) => (event.event === 'record' ? [event.data] : [])),
    next(event, options = {}) {
      const { match = () => true, from = 0, timeoutMs = 5_000 } = options;
      const find = () =>
        events
          .slice(from)
          .find(
            (found): found is EventOf<typeof event> =>
              found.event === event && match(found as EventOf<typeof event>),
          );
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = find();
          if (found) done(() => resolve(found));
          else if (isEnded) done(() => reject(new Error(`the stream ended before a "${event}" event`)));
        };
        const timer = setTimeout(
          () => done(() => reject(new Error(`no "${event}" event within ${timeoutMs} ms`))),
          timeoutMs,
        );
        const done = (settle: () => void) => {
          clearTimeout(timer);
          waiters.delete(check);
          settle();
        };
        waiters.add(check);
        check();
        // The iterator may end between two events: look again once it has.
        void ended.then(() => setTimeout(check, 0));
      });
    },
  };
}
