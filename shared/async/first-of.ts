/**
 * The first `count` items of `items`; the rest are never asked for, so a source that reads in
 * pages (a storage stream) reads no page past them.
 */
export async function* firstOf<T>(items: AsyncIterable<T>, count: number): AsyncGenerator<T> {
  if (count <= 0) return;
  let taken = 0;
  for await (const item of items) {
    yield item;
    taken += 1;
    if (taken >= count) return;
  }
}
