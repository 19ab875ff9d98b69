/**
 * The items of one page, ending with the signal's reason as soon as it aborts: a walk over pages
 * (history(), blocked()) ends inside a page too, not only at the next page's fetch.
 */
export function* eachUntilAborted<T>(items: readonly T[], signal: AbortSignal | undefined): Generator<T> {
  for (const item of items) {
    signal?.throwIfAborted();
    yield item;
  }
}
