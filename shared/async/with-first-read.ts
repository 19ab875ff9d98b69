/**
 * `items` with its first item asked for at once: `first` settles when it has come (or failed, or
 * there is none), and `all` then gives every item, that first one included, asking for the rest
 * only as they are taken. A response can so fail as any request does while nothing is sent yet.
 * Ending `all` early (or never taking it once `first` failed) ends the source.
 */
export function withFirstRead<T>(items: AsyncIterable<T>): {
  first: Promise<void>;
  all: AsyncGenerator<T>;
} {
  const source = items[Symbol.asyncIterator]();
  const head = source.next();
  async function* all(): AsyncGenerator<T> {
    try {
      for (let next = await head; !next.done; next = await source.next()) yield next.value;
    } finally {
      await source.return?.();
    }
  }
  return { first: head.then(() => undefined), all: all() };
}
