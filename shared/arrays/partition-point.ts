/**
 * The number of leading items of `items` that are `before` the point (a binary search): the items
 * must be ordered so that every one `before` returns true for comes first. Pure.
 */
export function partitionPoint<T>(items: readonly T[], before: (item: T) => boolean): number {
  let low = 0;
  let high = items.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (before(items[middle] as T)) low = middle + 1;
    else high = middle;
  }
  return low;
}
