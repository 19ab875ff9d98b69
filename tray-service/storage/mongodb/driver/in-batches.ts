import { MAX_BULK_OPERATIONS } from './coalesced-writes.ts';

/**
 * Reads `cursor` and hands its documents to `flush` MAX_BULK_OPERATIONS at a time, each batch
 * written before the next is read: what a read of unbounded size (every record naming a deleted
 * user) holds in memory is one batch, not all of it.
 */
export async function inBatches<T>(
  cursor: AsyncIterable<T>,
  flush: (docs: T[]) => Promise<void>,
): Promise<void> {
  let batch: T[] = [];
  for await (const doc of cursor) {
    batch.push(doc);
    if (batch.length === MAX_BULK_OPERATIONS) {
      await flush(batch);
      batch = [];
    }
  }
  if (batch.length > 0) await flush(batch);
}
